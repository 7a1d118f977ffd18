"""Writes the Bedrock test world `world/` with independent tools (see SOURCES.md).

Blocks, waterlogged blocks (a second storage) and block entities in the three dimensions
come from amulet-core's Bedrock writer; entities (`actorprefix` / `digp`), the pre-1.18.30
entity list, a version-8 sub-chunk, world records and a deleted key are written with
amulet-leveldb (Mojang's LevelDB) and amulet-nbt's little-endian NBT. Run:
    python make_world.py OUT_DIR     (amulet-core 1.9 installed)
"""
import os
import shutil
import struct
import sys

import amulet
import amulet_nbt as n
from amulet.api.block import Block
from amulet.api.block_entity import BlockEntity
from amulet.level.formats.leveldb_world import LevelDBFormat
from leveldb import LevelDB

path = sys.argv[1]
if os.path.exists(path):
    shutil.rmtree(path)
fmt = LevelDBFormat(path)
fmt.create_and_open("bedrock", (1, 21, 0))
fmt.close()
with open(os.path.join(path, "levelname.txt"), "w") as f:
    f.write("terrane test world")

V = ("bedrock", (1, 21, 0))
level = amulet.load_level(path)
water = Block("minecraft", "water", {"liquid_depth": n.IntTag(0)})
dims = {
    "minecraft:overworld": ("stone", -64, 80),
    "minecraft:the_nether": ("netherrack", 0, 40),
    "minecraft:the_end": ("end_stone", 0, 50),
}
for dim, (ground, low, top) in dims.items():
    for x in range(-8, 24):
        for z in range(-8, 24):
            level.set_version_block(x, top, z, dim, V, Block("minecraft", ground))
            if (x * 7 + z * 3) % 11 == 0:
                level.set_version_block(x, top + 1, z, dim, V, Block("minecraft", "glass"))
    # Waterlogged blocks: the water is the second storage.
    for i in range(6):
        fence = Block("minecraft", "oak_fence", extra_blocks=[water])
        level.set_version_block(2 * i, top + 1, 5, dim, V, fence)
    level.set_version_block(1, low, 1, dim, V, Block("minecraft", "bedrock", {"infiniburn_bit": n.ByteTag(0)}))
    items = n.ListTag([
        n.CompoundTag({
            "Name": n.StringTag("minecraft:diamond"),
            "Count": n.ByteTag(3),
            "Slot": n.ByteTag(0),
            "Damage": n.ShortTag(0),
        })
    ])
    be = BlockEntity("minecraft", "Chest", 5, top + 1, 9, n.NamedTag(n.CompoundTag({"Items": items})))
    chest = Block("minecraft", "chest", {"minecraft:cardinal_direction": n.StringTag("north")})
    level.set_version_block(5, top + 1, 9, dim, V, chest, be)
level.save()
level.close()

db = LevelDB(os.path.join(path, "db"))


def le(tag):
    return n.NamedTag(tag).to_nbt(compressed=False, little_endian=True)


def prefix(x, z, dim):
    return struct.pack("<ii", x, z) + (struct.pack("<i", dim) if dim else b"")


# Entities of current worlds: actorprefix + id, listed by the column's digp record.
for dim, (_, _, top) in zip((0, 1, 2), dims.values()):
    ids = []
    for i, (kind, x, z) in enumerate([("minecraft:cow", 7.5, 7.5), ("minecraft:pig", 20.5, 3.5)]):
        uid = (dim << 32) | (i + 1)
        ids.append((uid, x, z))
        actor = n.CompoundTag({
            "identifier": n.StringTag(kind),
            "UniqueID": n.LongTag(uid),
            "Pos": n.ListTag([n.FloatTag(x), n.FloatTag(top + 1.0), n.FloatTag(z)]),
            "Health": n.ShortTag(10),
        })
        db.put(b"actorprefix" + struct.pack("<q", uid), le(actor))
    for cx in (0, 1):
        listed = [u for (u, x, _z) in ids if int(x) // 16 == cx]
        db.put(b"digp" + prefix(cx, 0, dim), b"".join(struct.pack("<q", u) for u in listed))

# The pre-1.18.30 entity list of one column (kept as stored).
old = le(n.CompoundTag({"identifier": n.StringTag("minecraft:sheep"), "UniqueID": n.LongTag(99)}))
db.put(prefix(0, 1, 0) + b"\x32", old)

# One sub-chunk rewritten as version 8 (no y index in the record).
k = prefix(1, 1, 0) + b"\x2f" + struct.pack("<b", 5)
v = db.get(k)
assert v[0] == 9
db.put(k, bytes([8, v[1]]) + v[3:])

# World records besides chunks, and a key written then deleted.
db.put(b"~local_player", le(n.CompoundTag({"PlayerGameMode": n.IntTag(1)})))
db.put(b"map_-4294967295", le(n.CompoundTag({"scale": n.ByteTag(2)})))
db.put(b"VILLAGE_0f1e2d3c-0000-4000-8000-000000000001_INFO", le(n.CompoundTag({"X0": n.IntTag(0)})))
db.put(b"deleted_record", b"gone")
db.compact()
db.delete(b"deleted_record")
db.close()
