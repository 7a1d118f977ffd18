"""amulet-core converting a whole world to the other edition, the peer of `terrane convert` in
docs/BENCHMARKS.md ("terrane convert"): every chunk of the source loaded (decoded and
translated to amulet's universal blocks) and saved through a new world of the other edition.
    python amulet_convert.py SRC_WORLD DST_WORLD java|bedrock
"""
import sys

import amulet
from amulet.level.formats.anvil_world import AnvilFormat
from amulet.level.formats.leveldb_world import LevelDBFormat

src, dst, to = sys.argv[1], sys.argv[2], sys.argv[3]
level = amulet.load_level(src)
if to == "java":
    out = AnvilFormat(dst)
    out.create_and_open("java", (1, 21, 1))
else:
    out = LevelDBFormat(dst)
    out.create_and_open("bedrock", (1, 21, 0))
level.save(out)
out.close()
level.close()
print("converted")
