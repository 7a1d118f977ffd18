"""amulet-core reading a whole world, the peer of `terrane import bedrock` in
docs/BENCHMARKS.md ("Bedrock"): every chunk of every dimension loaded (decoded and
translated to amulet's universal blocks), nothing written.
    python amulet_read.py WORLD_DIR
"""
import sys

import amulet

level = amulet.load_level(sys.argv[1])
n = 0
for dim in level.dimensions:
    for cx, cz in level.all_chunk_coords(dim):
        level.get_chunk(cx, cz, dim)
        n += 1
level.close()
print(f"{n} columns")
