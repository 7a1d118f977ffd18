"""Writes `26.1-layout/`: a Java world folder in Minecraft 26.1's layout, made from region files
of `../anvil/` by the rules 26.1 Snapshot 6 published (every dimension under
`dimensions/<namespace>/<name>/`, player files under `players/data|stats|advancements/`):

    region/r.0.0.mca (1.21.1)      -> dimensions/minecraft/overworld/region/r.0.0.mca
    DIM-1/region (1.17.1 region)   -> dimensions/minecraft/the_nether/region/r.-3.-2.mca
    a datapack dimension           -> dimensions/terrane/mining/region/r.-1.-1.mca (21w44a)
    playerdata/<uuid>.dat          -> players/data/<uuid>.dat
    stats/, advancements/          -> players/stats/, players/advancements/

with a `level.dat` of DataVersion 4786 (26.1). The chunks keep the DataVersion they were saved
at, as in a world Minecraft upgraded (it rewrites chunks only as they load).
    python3 make_26_1_world.py      (from this folder; standard library only)
"""
import gzip
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "26.1-layout")
ANVIL = os.path.join(HERE, "..", "anvil")
UUID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"


def tag(t, v):
    """A named-less NBT payload (big-endian)."""
    if t == "byte":
        return struct.pack(">b", v)
    if t == "int":
        return struct.pack(">i", v)
    if t == "double":
        return struct.pack(">d", v)
    if t == "string":
        b = v.encode()
        return struct.pack(">H", len(b)) + b
    if t == "list_double":
        return struct.pack(">bi", 6, len(v)) + b"".join(struct.pack(">d", x) for x in v)
    if t == "compound":
        out = b""
        for name, (tt, vv) in v.items():
            out += struct.pack(">b", IDS[tt]) + tag("string", name) + tag(tt, vv)
        return out + b"\0"
    raise ValueError(t)


IDS = {"byte": 1, "int": 3, "double": 6, "string": 8, "list_double": 9, "compound": 10}


def nbt_file(path, root):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = struct.pack(">b", 10) + tag("string", "") + tag("compound", root)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(data)


def copy(src, dst):
    dst = os.path.join(OUT, dst)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(os.path.join(ANVIL, src), dst)


if os.path.exists(OUT):
    shutil.rmtree(OUT)
copy("1.21.1/r.0.0.mca", "dimensions/minecraft/overworld/region/r.0.0.mca")
copy("1.17.1/r.-3.-2.mca", "dimensions/minecraft/the_nether/region/r.-3.-2.mca")
copy("1.18-21w44a/r.-1.-1.mca", "dimensions/terrane/mining/region/r.-1.-1.mca")
version = {"Id": ("int", 4786), "Name": ("string", "26.1"), "Snapshot": ("byte", 0)}
nbt_file(os.path.join(OUT, "level.dat"), {"Data": ("compound", {
    "DataVersion": ("int", 4786),
    "Version": ("compound", version),
    "LevelName": ("string", "terrane 26.1 layout"),
})})
nbt_file(os.path.join(OUT, "players", "data", UUID + ".dat"), {
    "DataVersion": ("int", 4786),
    "Dimension": ("string", "minecraft:overworld"),
    "Pos": ("list_double", [8.5, 80.0, 8.5]),
})
for kind, body in [("stats", {"stats": {}, "DataVersion": 4786}), ("advancements", {"DataVersion": 4786})]:
    path = os.path.join(OUT, "players", kind, UUID + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(body, f)
print("wrote", OUT)
