// Generates crates/valence/data/older-states.tsv: for every Java block of a release after
// 1.20.1 (the game terrane-valence serves) that 1.20.1 lacks, the 1.20.1 block shown in its
// place. From minecraft-data's block lists (`pc/<version>/blocks.json`), every release from
// 1.20.2 to the newest it has:
//   - a block the game renamed is its old name (`RENAMES`, from the game's changelogs);
//   - otherwise the 1.20.1 blocks sharing the longest run of trailing name words (`door` of
//     `copper_door`, `brick_stairs` of `tuff_brick_stairs`) are candidates (when none shares
//     a word, every block of the same shape, `boundingBox`), never air, and flower pots only
//     for flower pots; the nearest wins: the same tool (`material`), then the same
//     transparency, then the closest hardness, then the same light, then the most property
//     names in common, then the shorter name.
// Usage: node generate.js MINECRAFT_DATA_PACKAGE_DIR OUT.tsv
'use strict'

const fs = require('fs')
const path = require('path')

const [pkg, out] = process.argv.slice(2)
const data = path.join(pkg, 'minecraft-data', 'data')
const paths = JSON.parse(fs.readFileSync(path.join(data, 'dataPaths.json'))).pc
const blocks = (v) => JSON.parse(fs.readFileSync(path.join(data, paths[v].blocks, 'blocks.json')))

// The game's renames: `grass` became `short_grass` in 1.20.3, `chain` `iron_chain` in 1.21.9.
const RENAMES = { short_grass: 'grass', iron_chain: 'chain' }

// Blocks whose nearest 1.20.1 block is a judgement of how they look and behave, where the
// rules below pick worse (a flower shown as kelp): each is the block the game's own art or
// mechanics are closest to.
const CHOSEN = {
  shelf: 'bookshelf',
  copper_bulb: 'redstone_lamp',
  copper_grate: 'cut_copper',
  closed_eyeblossom: 'poppy',
  open_eyeblossom: 'poppy',
  potted_closed_eyeblossom: 'potted_poppy',
  potted_open_eyeblossom: 'potted_poppy',
  potted_golden_dandelion: 'potted_dandelion',
  creaking_heart: 'oak_log',
  crafter: 'dispenser',
  vault: 'spawner',
  heavy_core: 'iron_block',
  leaf_litter: 'pink_petals',
  wildflowers: 'pink_petals',
  resin_clump: 'glow_lichen',
  pale_hanging_moss: 'hanging_roots',
  test_instance_block: 'structure_block'
}

const old = new Map(blocks('1.20.1').map((b) => [b.name, b]))
const newer = new Map()
const order = (v) => v.split('.').map(Number)
const later = Object.keys(paths)
  .filter((v) => /^\d+(\.\d+)*$/.test(v) && paths[v].blocks)
  .filter((v) => { const [a, b, c = 0] = order(v); return a > 1 || b > 20 || (b === 20 && c > 1) })
  .sort((x, y) => { const a = order(x); const b = order(y); for (let i = 0; i < 3; i++) if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) - (b[i] || 0); return 0 })
for (const v of later) for (const b of blocks(v)) if (!old.has(b.name)) newer.set(b.name, b)

const props = (b) => new Set((b.states || []).map((s) => s.name))
function nearest (b) {
  if (RENAMES[b.name]) return [RENAMES[b.name], 'renamed']
  const chosen = CHOSEN[b.name] ? b.name : Object.keys(CHOSEN).find((k) => b.name.endsWith('_' + k))
  if (chosen) return [CHOSEN[chosen], 'chosen']
  const words = b.name.split('_')
  const potted = b.name.startsWith('potted_')
  const eligible = [...old.values()].filter((o) =>
    !/^(cave_|void_)?air$/.test(o.name) && o.name.startsWith('potted_') === potted)
  let candidates = []
  for (let k = words.length; k >= 1 && candidates.length === 0; k--) {
    const tail = '_' + words.slice(-k).join('_')
    candidates = eligible.filter((o) => ('_' + o.name).endsWith(tail) && !(potted && k === 1))
  }
  const why = candidates.length ? 'family' : 'nearest'
  if (candidates.length === 0) candidates = eligible.filter((o) => o.boundingBox === b.boundingBox)
  const mine = props(b)
  const key = (o) => [
    o.material === b.material ? 0 : 1,
    o.transparent === b.transparent ? 0 : 1,
    Math.abs((o.hardness ?? 0) - (b.hardness ?? 0)),
    o.emitLight === b.emitLight ? 0 : 1,
    -[...props(o)].filter((p) => mine.has(p)).length,
    o.name.length
  ]
  candidates.sort((x, y) => {
    const a = key(x); const c = key(y)
    for (let i = 0; i < a.length; i++) if (a[i] !== c[i]) return a[i] - c[i]
    return x.name < y.name ? -1 : 1
  })
  return [candidates[0].name, why]
}

const lines = ['# newer block\t1.20.1 block shown\twhy (renamed, chosen, family, nearest)']
for (const to of Object.values(CHOSEN)) if (!old.has(to)) throw new Error(`${to} is not a 1.20.1 block`)
for (const name of [...newer.keys()].sort()) {
  const [to, why] = nearest(newer.get(name))
  lines.push(`minecraft:${name}\tminecraft:${to}\t${why}`)
}
fs.writeFileSync(out, lines.join('\n') + '\n')
console.log(`wrote ${out}: ${newer.size} blocks (${later[0]} to ${later[later.length - 1]})`)
