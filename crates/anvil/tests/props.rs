//! Property tests against a simple model: random sections in every layout survive
//! NBT export → import and terrane conversion → back, cell for cell.

use proptest::prelude::*;
use terrane_anvil::{Column, Layout, Section, mapping};

fn state(i: usize) -> String {
    match i % 3 {
        0 => format!("minecraft:block_{i}"),
        1 => format!("minecraft:stairs_{i}[facing=north,half=top,waterlogged=false]"),
        _ => format!("mod:thing_{i}[a={}]", i % 7),
    }
}

fn column(layout: Layout, dv: i32, sections: Vec<(i32, usize, Vec<u16>)>) -> Column {
    let mut rest = terrane_anvil::nbt::Compound::new();
    if layout != Layout::Flat {
        rest.insert("Level".to_string(), terrane_anvil::nbt::Tag::Compound(Default::default()));
    }
    Column {
        x: -7,
        z: 12,
        data_version: Some(dv),
        layout,
        sections: sections
            .into_iter()
            .map(|(y, n, cells)| Section {
                y,
                palette: (0..n).map(state).collect(),
                blocks: cells.into_iter().map(|c| c % n as u16).collect(),
            })
            .collect(),
        block_entities: Vec::new(),
        entities: Vec::new(),
        external_entities: None,
        rest,
    }
}

fn cells(c: &Column) -> Vec<(i32, Vec<String>)> {
    let mut v: Vec<(i32, Vec<String>)> = c
        .sections
        .iter()
        .map(|s| (s.y, s.blocks.iter().map(|&i| s.palette[i as usize].clone()).collect()))
        .collect();
    v.sort();
    v
}

fn arb_sections() -> impl Strategy<Value = Vec<(i32, usize, Vec<u16>)>> {
    prop::collection::btree_map(
        -4i32..20,
        (1usize..300, prop::collection::vec(any::<u16>(), 4096)),
        1..4,
    )
    .prop_map(|m| m.into_iter().map(|(y, (n, c))| (y, n, c)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_layout_roundtrips(
        which in 0usize..3,
        sections in arb_sections(),
    ) {
        // 1.15.2 (unpadded), 1.16.5 (padded, wrapped), 1.21.1 (flat).
        let (layout, dv) = [(Layout::Wrapped, 2230), (Layout::Wrapped, 2586), (Layout::Flat, 3955)][which];
        let col = column(layout, dv, sections);
        let nbt = col.to_nbt().unwrap();
        let back = Column::from_nbt(&nbt, (col.x, col.z)).unwrap();
        prop_assert_eq!(cells(&back), cells(&col));
        prop_assert_eq!(back.layout, layout);
        let mut schema = terrane_chunk::Schema::new();
        let (imp, stats) = mapping::column_to_terrane(&back, 1, &mut schema).unwrap();
        prop_assert_eq!(stats.chunks as usize, col.sections.len());
        let (again, ts) = mapping::terrane_to_column(&imp, &schema).unwrap();
        prop_assert_eq!(ts, 1);
        prop_assert_eq!(cells(&again), cells(&col));
        prop_assert_eq!(again.to_nbt().unwrap(), back.to_nbt().unwrap());
    }
}
