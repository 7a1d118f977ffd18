// Writes terrane-bedrock's Java ⇄ Bedrock block-state table (`data/java-bedrock.tsv.gz`)
// from the minecraft-data package: `cargo xtask tables` runs it with the package's folder.
// The table's layout: docs/format/java-bedrock-table.md.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const [pkgDir, out] = process.argv.slice(2);
if (!pkgDir || !out) {
  console.error('usage: node generate.js MINECRAFT_DATA_PACKAGE_DIR OUT.tsv.gz');
  process.exit(2);
}
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
const BEDROCK = '1.26.30';
const data = path.join(pkgDir, 'minecraft-data/data');
const read = (f) => JSON.parse(fs.readFileSync(path.join(data, 'bedrock', BEDROCK, f), 'utf8'));
const j2b = read('blocksJ2B.json');
const b2j = read('blocksB2J.json');
const states = read('blockStates.json');
const javaVersion = (() => {
  const paths = JSON.parse(fs.readFileSync(path.join(data, 'dataPaths.json'), 'utf8'));
  return Object.keys(paths.pc).filter((v) => /^1\.\d+(\.\d+)?$/.test(v)).pop();
})();

// minecraft-data spells states `name[k=v,...]`, untyped (`true`, `1`, `north`); terrane's
// Bedrock names type them as SNBT (`1b`, `1`, `"north"`), keys sorted
// (crates/bedrock/src/names.rs). The types come from blockStates.json.
const types = new Map(); // block name → Map(key → type)
let version = null;
for (const s of states) {
  const name = s.name.includes(':') ? s.name : 'minecraft:' + s.name;
  let m = types.get(name);
  if (!m) types.set(name, (m = new Map()));
  for (const [k, v] of Object.entries(s.states)) m.set(k, v.type);
  if (version === null) version = s.version;
  else if (version !== s.version) throw new Error(`block versions differ: ${version} ${s.version}`);
}
const known = new Set();
for (const s of states) {
  const name = s.name.includes(':') ? s.name : 'minecraft:' + s.name;
  known.add(typed(name, Object.entries(s.states).map(([k, v]) => [k, String(v.value)])));
}

function split(s) {
  const i = s.indexOf('[');
  if (i < 0) return [s, []];
  const inner = s.slice(i + 1, -1);
  const props = inner === '' ? [] : inner.split(',').map((p) => p.split('='));
  return [s.slice(0, i), props];
}

function typed(name, props) {
  const t = types.get(name);
  if (!t) throw new Error(`no Bedrock block ${name}`);
  const kv = props.map(([k, v]) => {
    switch (t.get(k)) {
      case 'byte':
        return [k, (v === 'true' || v === '1' ? '1' : '0') + 'b'];
      case 'int':
        return [k, String(Number(v))];
      case 'string':
        return [k, '"' + v.replace(/[\\"]/g, (c) => '\\' + c) + '"'];
      default:
        throw new Error(`${name}: no type for state ${k}`);
    }
  });
  kv.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return kv.length ? `${name}[${kv.map(([k, v]) => k + '=' + v).join(',')}]` : name;
}

function bedrockName(s) {
  const [name, props] = split(s);
  return typed(name, props);
}

function javaName(s) {
  const [name, props] = split(s);
  props.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return props.length ? `${name}[${props.map(([k, v]) => k + '=' + v).join(',')}]` : name;
}

// Bedrock states: every state B2J maps, then those J2B reaches that B2J leaves out.
const bedrock = [];
const index = new Map();
const add = (b) => {
  if (!index.has(b)) {
    if (!known.has(b)) throw new Error(`${b} is not a Bedrock ${BEDROCK} state`);
    index.set(b, bedrock.length);
    bedrock.push([b, null]);
  }
  return index.get(b);
};
for (const [b, j] of Object.entries(b2j)) bedrock[add(bedrockName(b))][1] = javaName(j);
const java = [];
for (const [j, b] of Object.entries(j2b)) java.push([javaName(j), add(bedrockName(b))]);
java.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

// Biomes. Bedrock stores numeric ids: bedrock/1.20.0/biomes.json has Bedrock's own ids (later
// files number biomes alphabetically); the two biomes added since are given theirs here.
// Java names Bedrock spells otherwise, and Bedrock's legacy variants, map by the lists below.
const bedrockBiomes = new Map(
  JSON.parse(fs.readFileSync(path.join(data, 'bedrock/1.20.0/biomes.json'), 'utf8')).map((b) => [b.name, b.id])
);
bedrockBiomes.set('cherry_grove', 192);
bedrockBiomes.set('pale_garden', 193);
const javaBiomes = JSON.parse(
  fs.readFileSync(path.join(data, 'pc', javaVersion, 'biomes.json'), 'utf8')
).map((b) => b.name);
// Java name → Bedrock name, where they differ.
const JAVA_TO_BEDROCK = {
  badlands: 'mesa', dark_forest: 'roofed_forest', eroded_badlands: 'mesa_bryce',
  ice_spikes: 'ice_plains_spikes', mushroom_fields: 'mushroom_island', nether_wastes: 'hell',
  old_growth_birch_forest: 'birch_forest_mutated', old_growth_pine_taiga: 'mega_taiga',
  old_growth_spruce_taiga: 'redwood_taiga_mutated', snowy_beach: 'cold_beach',
  snowy_plains: 'ice_plains', snowy_taiga: 'cold_taiga', soul_sand_valley: 'soulsand_valley',
  sparse_jungle: 'jungle_edge', stony_shore: 'stone_beach', swamp: 'swampland',
  windswept_forest: 'extreme_hills_plus_trees', windswept_gravelly_hills: 'extreme_hills_mutated',
  windswept_hills: 'extreme_hills', windswept_savanna: 'savanna_mutated',
  wooded_badlands: 'mesa_plateau_stone', end_barrens: 'the_end', end_highlands: 'the_end',
  end_midlands: 'the_end', small_end_islands: 'the_end', the_void: 'the_end',
};
// Bedrock's legacy variants (no Java biome of their own since 1.18) → the Java biome.
const BEDROCK_VARIANTS = {
  bamboo_jungle_hills: 'bamboo_jungle', birch_forest_hills: 'birch_forest',
  birch_forest_hills_mutated: 'old_growth_birch_forest', cold_taiga_hills: 'snowy_taiga',
  cold_taiga_mutated: 'snowy_taiga', deep_warm_ocean: 'warm_ocean', desert_hills: 'desert',
  desert_mutated: 'desert', extreme_hills_edge: 'windswept_hills',
  extreme_hills_plus_trees_mutated: 'windswept_forest', forest_hills: 'forest',
  ice_mountains: 'snowy_plains', jungle_edge_mutated: 'sparse_jungle', jungle_hills: 'jungle',
  jungle_mutated: 'jungle', legacy_frozen_ocean: 'frozen_ocean', mega_taiga_hills: 'old_growth_pine_taiga',
  mesa_plateau: 'badlands', mesa_plateau_mutated: 'badlands', mesa_plateau_stone_mutated: 'wooded_badlands',
  mushroom_island_shore: 'mushroom_fields', redwood_taiga_hills_mutated: 'old_growth_spruce_taiga',
  roofed_forest_mutated: 'dark_forest', savanna_plateau_mutated: 'windswept_savanna',
  swampland_mutated: 'swamp', taiga_hills: 'taiga', taiga_mutated: 'taiga',
};
const biomeLines = [];
const bedrockOfJava = new Map();
for (const j of javaBiomes) {
  const b = JAVA_TO_BEDROCK[j] || j;
  if (!bedrockBiomes.has(b)) throw new Error(`Java biome ${j}: no Bedrock biome ${b}`);
  bedrockOfJava.set(j, bedrockBiomes.get(b));
  biomeLines.push(`G\tminecraft:${j}\t${bedrockBiomes.get(b)}`);
}
const javaOfBedrock = new Map();
for (const [j, b] of Object.entries(JAVA_TO_BEDROCK)) if (!javaOfBedrock.has(b)) javaOfBedrock.set(b, j);
for (const [b, id] of [...bedrockBiomes].sort((x, y) => x[1] - y[1])) {
  const j = javaBiomes.includes(b) ? b : javaOfBedrock.get(b) || BEDROCK_VARIANTS[b];
  if (!j || !javaBiomes.includes(j)) throw new Error(`Bedrock biome ${b}: no Java biome`);
  biomeLines.push(`H\t${id}\t${b}\tminecraft:${j}`);
}

// Items (the contents of containers). A Java item that is a block takes the Bedrock block its
// states mostly map to, when that is a Bedrock item and the Java name is not one, or means
// another block in Bedrock (Java `stone_stairs` is Bedrock `normal_stone_stairs`; Bedrock's
// `stone_stairs` are cobblestone). Otherwise a name both editions have maps to itself, and the
// items listed below by rule; a Java item with none of these has no line (dropped).
const javaItems = JSON.parse(
  fs.readFileSync(path.join(data, 'pc', javaVersion, 'items.json'), 'utf8')
).map((i) => i.name);
const bedrockItems = read('items.json').map((i) => i.name);
const javaItemSet = new Set(javaItems);
const bedrockItemSet = new Set(bedrockItems);
const majority = (pairs) => {
  const m = new Map(); // block name → (other edition's block name → states)
  for (const [from, to] of pairs) {
    const a = split(from)[0].replace(/^minecraft:/, '');
    const b = split(to)[0].replace(/^minecraft:/, '');
    let c = m.get(a);
    if (!c) m.set(a, (c = new Map()));
    c.set(b, (c.get(b) || 0) + 1);
  }
  const out = new Map();
  for (const [a, c] of m) out.set(a, [...c].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))[0][0]);
  return out;
};
const bedrockBlockOfJava = majority(Object.entries(j2b));
const javaBlockOfBedrock = majority(Object.entries(b2j));
const COLORS = ['white', 'orange', 'magenta', 'light_blue', 'yellow', 'lime', 'pink', 'gray',
  'light_gray', 'cyan', 'purple', 'blue', 'brown', 'green', 'red', 'black'];
// Java items Bedrock names otherwise, with Bedrock's `Damage` (beds: the colour's wool order;
// banners: the reverse, black 0).
const ITEM_RULES = new Map([
  ['item_frame', ['frame', 0]], ['nether_brick', ['netherbrick', 0]],
  ['light', ['light_block_15', 0]], ['glow_item_frame', ['glow_frame', 0]], ['map', ['empty_map', 0]],
  ['zombified_piglin_spawn_egg', ['zombie_pigman_spawn_egg', 0]],
  ...COLORS.map((c, i) => [`${c}_bed`, ['bed', i]]),
  ...COLORS.map((c, i) => [`${c}_banner`, ['banner', 15 - i]]),
]);
const itemLines = [];
const javaOfBedrockItem = new Map();
for (const j of [...javaItems].sort()) {
  let b = null;
  let damage = 0;
  const viaBlock = bedrockBlockOfJava.get(j);
  const sameMeansOther = javaBlockOfBedrock.has(j) && javaBlockOfBedrock.get(j) !== j;
  if (ITEM_RULES.has(j)) [b, damage] = ITEM_RULES.get(j);
  else if (viaBlock && bedrockItemSet.has(viaBlock) && (!bedrockItemSet.has(j) || sameMeansOther)) b = viaBlock;
  else if (bedrockItemSet.has(j)) b = j;
  if (b === null || b === 'unknown') continue; // Bedrock's placeholder for test blocks
  if (!bedrockItemSet.has(b)) throw new Error(`Java item ${j}: no Bedrock item ${b}`);
  itemLines.push(`I\tminecraft:${j}\tminecraft:${b}\t${damage}`);
  const k = `${b}\t${damage}`;
  if (!javaOfBedrockItem.has(k) || j === b) javaOfBedrockItem.set(k, j);
}
// Bedrock items: the Java block their block's states mostly map to, when that is a Java item;
// otherwise the Java item whose line above gives them (itself first).
for (const b of [...bedrockItems].sort()) {
  const viaBlock = javaBlockOfBedrock.get(b);
  const rules = [...ITEM_RULES].filter(([, [rb]]) => rb === b);
  if (rules.length > 0) {
    // One rule: any Damage; several (beds, banners): by Damage.
    for (const [j, [, damage]] of rules) {
      itemLines.push(`K\tminecraft:${b}\t${rules.length > 1 ? damage : ''}\tminecraft:${j}`);
    }
    continue;
  }
  let j = null;
  if (viaBlock && javaItemSet.has(viaBlock)) j = viaBlock;
  else if (javaOfBedrockItem.has(`${b}\t0`)) j = javaOfBedrockItem.get(`${b}\t0`);
  if (j !== null && b !== 'unknown') itemLines.push(`K\tminecraft:${b}\t\tminecraft:${j}`);
}
const javaOfItemLine = new Map(
  itemLines.filter((l) => l.startsWith('K')).map((l) => l.split('\t')).map((f) => [`${f[1]}\t${f[2]}`, f[3]])
);
const itemsOneToOne = itemLines.filter((l) => l.startsWith('I')).filter((l) => {
  const [, j, b, d] = l.split('\t');
  return (javaOfItemLine.get(`${b}\t${d}`) || javaOfItemLine.get(`${b}\t`)) === j;
}).length;

const lines = [
  `# terrane-bedrock: Java <-> Bedrock block states. Generated by \`cargo xtask tables\`; do not edit.`,
  `# Source: minecraft-data ${pkg.version} (MIT), data/bedrock/${BEDROCK}/blocksJ2B.json, ` +
    `blocksB2J.json and blockStates.json (Java ${javaVersion}); biomes: data/bedrock/1.20.0 and ` +
    `data/pc/${javaVersion} biomes.json; items: data/bedrock/${BEDROCK} and data/pc/${javaVersion} items.json.`,
  `version\t${version}\t${BEDROCK}\t${pkg.version}`,
];
for (const [b, j] of bedrock) lines.push(`B\t${b}\t${j === null ? '' : j}`);
for (const [j, i] of java) lines.push(`J\t${j}\t${i}`);
lines.push(...biomeLines);
lines.push(...itemLines);
const text = lines.join('\n') + '\n';
fs.writeFileSync(out, zlib.gzipSync(Buffer.from(text), { level: 9, mtime: 0 }));
const noJava = bedrock.filter((b) => b[1] === null).length;
console.log(
  `${out}: ${bedrock.length} Bedrock states (${noJava} without a Java state), ` +
    `${java.length} Java states, ${biomeLines.length} biome lines, ${itemLines.length} item lines ` +
    `(${itemsOneToOne} Java items come back), ${text.length} bytes before gzip`
);
