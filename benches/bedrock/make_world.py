"""Writes a Bedrock world for the import/export figures (docs/BENCHMARKS.md, "Bedrock"):
SIDE x SIDE overworld columns, each with four sub-chunks of layered terrain (stone, ores,
dirt, grass, water with waterlogged plants, air) through amulet-core's Bedrock writer.
    python make_world.py OUT_DIR [SIDE=32]
"""
import os
import shutil
import sys

import amulet_nbt
import numpy

import amulet
from amulet.api.block import Block
from amulet.api.chunk import Chunk
from amulet.level.formats.leveldb_world import LevelDBFormat

path = sys.argv[1]
side = int(sys.argv[2]) if len(sys.argv) > 2 else 32
if os.path.exists(path):
    shutil.rmtree(path)
fmt = LevelDBFormat(path)
fmt.create_and_open("bedrock", (1, 21, 0))
fmt.close()
with open(os.path.join(path, "levelname.txt"), "w") as f:
    f.write("terrane bench world")

level = amulet.load_level(path)
V = ("bedrock", (1, 21, 0))
version = level.translation_manager.get_version(*V)
water = Block("minecraft", "water", {"liquid_depth": amulet_nbt.IntTag(0)})


def universal(block):
    return version.block.to_universal(block)[0]


names = ["air", "stone", "dirt", "grass_block", "coal_ore", "iron_ore", "gravel", "sand", "water"]
palette = [universal(Block("minecraft", n) if n != "water" else water) for n in names]
plain = universal(Block("minecraft", "oak_fence"))
fence = Block(plain.namespace, plain.base_name, plain.properties, extra_blocks=[palette[8]])
rng = numpy.random.default_rng(7)
for cx in range(side):
    for cz in range(side):
        chunk = Chunk(cx, cz)
        ids = [chunk.block_palette.get_add_block(b) for b in palette]
        fid = chunk.block_palette.get_add_block(fence)
        height = 40 + (numpy.add.outer(numpy.arange(16), numpy.arange(16)) + cx * 3 + cz * 5) % 20
        for cy in range(0, 4):
            arr = numpy.zeros((16, 16, 16), dtype=numpy.uint32)
            ys = numpy.arange(16) + cy * 16
            solid = ys[None, None, :] < height[:, :, None]
            arr[solid] = ids[1]
            ores = rng.random((16, 16, 16)) < 0.02
            arr[solid & ores] = ids[4]
            arr[solid & (rng.random((16, 16, 16)) < 0.01)] = ids[5]
            top = (ys[None, None, :] >= height[:, :, None] - 3) & solid
            arr[top] = ids[2]
            arr[(ys[None, None, :] == height[:, :, None] - 1)] = ids[3]
            wet = (~solid) & (ys[None, None, :] < 52)
            arr[wet] = ids[8]
            arr[wet & (rng.random((16, 16, 16)) < 0.05)] = fid
            chunk.blocks.add_sub_chunk(cy, arr)
        level.put_chunk(chunk, "minecraft:overworld")
level.save()
level.close()
