"""Compares two Minecraft worlds as amulet-core reads them: every chunk, every block (the
extra blocks of a cell, i.e. Bedrock's second storage, included), every block entity and,
for Bedrock, every entity record. Prints one line per difference and a summary; exit 1 when
they differ. Used by terrane's tests on the worlds terrane exports:
    python check_world.py EXPECTED_WORLD ACTUAL_WORLD
"""
import sys

import numpy

import amulet
import amulet_nbt


def blocks(level, dim, cx, cz):
    """{(cy): array of block strings} of one chunk, extra blocks included."""
    chunk = level.get_chunk(cx, cz, dim)
    palette = numpy.array([str(b) for b in chunk.block_palette], dtype=object)
    out = {}
    for cy in chunk.blocks.sub_chunks:
        out[cy] = palette[chunk.blocks.get_sub_chunk(cy)]
    bes = {}
    for pos, be in chunk.block_entities.items():
        bes[pos] = (be.namespaced_name, be.nbt.to_snbt())
    return out, bes


def entities(level):
    wrapper = level.level_wrapper
    db = getattr(wrapper, "level_db", None)
    if db is None:
        return {}
    out = {}
    for k, v in db.iterate(b"actorprefix", b"actorprefiy"):
        try:
            out[bytes(k)] = amulet_nbt.load(v, little_endian=True).to_snbt()
        except Exception:
            out[bytes(k)] = bytes(v).hex()
    return out


def main():
    a = amulet.load_level(sys.argv[1])
    b = amulet.load_level(sys.argv[2])
    diffs = 0
    cells = 0
    for dim in a.dimensions:
        ca = set(a.all_chunk_coords(dim))
        cb = set(b.all_chunk_coords(dim))
        if ca != cb:
            print(f"{dim}: chunks only in expected {sorted(ca - cb)[:5]}, only in actual {sorted(cb - ca)[:5]}")
            diffs += 1
        for cx, cz in sorted(ca & cb):
            (sa, ea), (sb, eb) = blocks(a, dim, cx, cz), blocks(b, dim, cx, cz)
            for cy in sorted(set(sa) | set(sb)):
                xa, xb = sa.get(cy), sb.get(cy)
                if xa is None or xb is None:
                    air = xa if xb is None else xb
                    if any("air" not in s for s in air.ravel()):
                        print(f"{dim} {cx},{cz} sub-chunk {cy} only on one side")
                        diffs += 1
                    continue
                cells += xa.size
                ne = numpy.argwhere(xa != xb)
                for x, y, z in ne[:3]:
                    print(f"{dim} block {cx*16+x},{cy*16+y},{cz*16+z}: {xa[x,y,z]} != {xb[x,y,z]}")
                diffs += len(ne)
            if ea != eb:
                print(f"{dim} {cx},{cz} block entities differ: {ea} != {eb}")
                diffs += 1
    na, nb = entities(a), entities(b)
    if na != nb:
        print(f"entity records differ: {len(na)} expected, {len(nb)} actual")
        diffs += 1
    print(f"compared {cells} cells, {len(na)} entity records: {diffs} differences")
    a.close()
    b.close()
    sys.exit(1 if diffs else 0)


main()
