"""How far amulet-core agrees with a conversion between the editions: it reads the source
world and the converted one (each through its own translator, into amulet's universal block
format) and compares every cell of every chunk both hold, the extra blocks of a cell (Java's
waterlogging, Bedrock's second layer) included. A sub-chunk one world holds and the other
does not is compared with air: both editions read a missing sub-chunk as air, and a
conversion writes none that is all air. Prints the agreement and the most common
disagreements; used by terrane's tests on `terrane convert`:
    python agree_editions.py SOURCE_WORLD CONVERTED_WORLD
"""
import collections
import sys

import numpy

import amulet


def cells(level, dim, cx, cz):
    """{cy: array of universal block strings} of one chunk."""
    chunk = level.get_chunk(cx, cz, dim)
    palette = numpy.array([str(b) for b in chunk.block_palette], dtype=object)
    return {cy: palette[chunk.blocks.get_sub_chunk(cy)] for cy in chunk.blocks.sub_chunks}


AIR = "universal_minecraft:air"


def main():
    a = amulet.load_level(sys.argv[1])
    b = amulet.load_level(sys.argv[2])
    total = agree = 0
    differ = collections.Counter()
    for dim in a.dimensions:
        if dim not in b.dimensions:
            continue
        both = set(a.all_chunk_coords(dim)) & set(b.all_chunk_coords(dim))
        for cx, cz in sorted(both):
            sa, sb = cells(a, dim, cx, cz), cells(b, dim, cx, cz)
            for cy in sorted(set(sa) | set(sb)):
                xa, xb = sa.get(cy), sb.get(cy)
                if xa is None:
                    xa = numpy.full(xb.shape, AIR, dtype=object)
                if xb is None:
                    xb = numpy.full(xa.shape, AIR, dtype=object)
                same = xa == xb
                total += xa.size
                agree += int(same.sum())
                for u, v in zip(xa[~same], xb[~same]):
                    differ[(u, v)] += 1
    a.close()
    b.close()
    for (u, v), n in differ.most_common(40):
        print(f"  {n:>9}  {u}  ->  {v}")
    pct = 100.0 * agree / max(total, 1)
    print(f"agreement: {agree} of {total} cells ({pct:.4f} %)")


main()
