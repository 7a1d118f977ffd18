// Survival players for crash tests: several mineflayer 1.20.1 clients (offline mode) in one
// process. Each walks its lane, digs a grass block beside it and fills the hole with an oak
// plank from its inventory, and now and then walks back to its chest to take planks and
// move diamonds, emeralds, a named and enchanted sword and a shulker box full of items
// between the chest and its inventory, and raw iron and coal between its inventory and the
// furnace beside the chest (its input and fuel slots). When the server goes away
// (it is killed), each reconnects every half second, forever: the test ends this process.
//
// Usage: node play.js '{"host":"127.0.0.1","port":25565,"seed":1,
//   "bots":[{"name":"p0","lane":{"x0":0,"z":0,"length":40},"chest":[0,65,-2],
//            "furnace":[1,65,-2]}]}'
// Prints JSON lines on stdout: {"event":"spawn","bot","uuid","pos","items"} after each join
// (items: name -> count, cursor included), {"event":"action","bot","what",...} after each
// action the client saw confirmed.
'use strict'

const mineflayer = require('mineflayer')
const { Vec3 } = require('vec3')

const args = JSON.parse(process.argv[2])
const say = (obj) => console.log(JSON.stringify(obj))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// A seeded generator (mulberry32), one per bot, so that runs repeat their choices.
function rng (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function withTimeout (promise, ms, what) {
  return Promise.race([
    promise,
    new Promise((resolve, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))
  ])
}

function counts (bot) {
  const out = {}
  const add = (item) => { if (item) out[item.name] = (out[item.name] || 0) + item.count }
  bot.inventory.slots.forEach(add)
  add(bot.inventory.selectedItem) // the stack on the cursor
  return out
}

function held (bot, name) {
  return bot.inventory.items().filter((i) => i.name === name).reduce((n, i) => n + i.count, 0)
}

async function walkTo (bot, x, z, alive) {
  const end = Date.now() + 20000
  try {
    while (alive() && Date.now() < end) {
      const p = bot.entity.position
      const dx = x - p.x
      const dz = z - p.z
      if (dx * dx + dz * dz < 0.25) break
      await bot.lookAt(new Vec3(x, p.y + 1.6, z), true)
      bot.setControlState('forward', true)
      bot.setControlState('sprint', false)
      await sleep(50)
    }
  } finally {
    bot.clearControlStates()
  }
}

async function edit (bot, cfg, state, alive) {
  const p = bot.entity.position
  const z = cfg.lane.z
  for (const dz of [1, -1]) {
    for (const dx of [0, 1, -1, 2, -2]) {
      const x = Math.floor(p.x) + dx
      if (x < cfg.lane.x0 || x > cfg.lane.x0 + cfg.lane.length) continue
      const b = bot.blockAt(new Vec3(x, 64, z + dz))
      if (!b || (b.name !== 'grass_block' && b.name !== 'dirt')) continue
      await withTimeout(bot.dig(b, true), 15000, 'dig')
      say({ event: 'action', bot: cfg.name, what: 'dig', pos: [x, 64, z + dz] })
      const planks = bot.inventory.items().find((i) => i.name === 'oak_planks')
      if (!planks || !alive()) return true
      await withTimeout(bot.equip(planks, 'hand'), 10000, 'equip')
      const below = bot.blockAt(new Vec3(x, 63, z + dz))
      try {
        await withTimeout(bot.placeBlock(below, new Vec3(0, 1, 0)), 15000, 'place')
      } catch (e) {
        const message = String(e && e.message)
        // The hand was empty again when the place began: the server decides every click
        // and sends its own view of a window after one it refused. Nothing to place.
        if (message.includes('must be holding an item to place')) {
          say({ event: 'refused', bot: cfg.name, what: 'place', message })
          return true
        }
        // mineflayer waits 5 s for the block update; a busy machine can take longer.
        if (!message.includes('did not fire within timeout')) throw e
      }
      say({ event: 'action', bot: cfg.name, what: 'place', pos: [x, 64, z + dz] })
      return true
    }
  }
  // Nothing to dig within reach: walk on along the lane, turning at its ends.
  let next = Math.floor(p.x) + 3 * state.dir + 0.5
  if (next > cfg.lane.x0 + cfg.lane.length || next < cfg.lane.x0) {
    state.dir = -state.dir
    next = Math.floor(p.x) + 3 * state.dir + 0.5
  }
  await walkTo(bot, next, z + 0.5, alive)
  return false
}

// The server sends an opened window twice: Valence's packet with the container's own slots
// (which mineflayer's openContainer resolves on), then, a tick later, the whole window with
// the player's inventory. Until the second arrives, this shows the inventory from what the
// bot knows, as a vanilla client's own screen does.
function mirrorInventory (bot, window) {
  for (let i = 9; i < 45; i++) {
    const item = bot.inventory.slots[i]
    const j = window.inventoryStart + (i - 9)
    if (item) {
      const copy = Object.assign(Object.create(Object.getPrototypeOf(item)), item)
      copy.slot = j
      window.slots[j] = copy
    } else {
      window.slots[j] = null
    }
  }
}

async function chestTrip (bot, cfg, random, alive) {
  const [cx, cy, cz] = cfg.chest
  await walkTo(bot, cx + 0.5, cfg.lane.z + 0.5, alive)
  if (!alive()) return
  // The chest's chunk may still be on its way on a busy machine.
  const until = Date.now() + 15000
  while (alive() && !bot.blockAt(new Vec3(cx, cy, cz)) && Date.now() < until) await sleep(100)
  if (!alive()) return
  const block = bot.blockAt(new Vec3(cx, cy, cz))
  if (!block || block.name !== 'chest') throw new Error(`no chest at ${cfg.chest}: ${block && block.name}`)
  const chest = await withTimeout(bot.openContainer(block), 15000, 'open the chest')
  mirrorInventory(bot, chest)
  try {
    const inChest = (name) => chest.containerItems().filter((i) => i.name === name).reduce((n, i) => n + i.count, 0)
    const moves = []
    const planks = Math.min(8 - held(bot, 'oak_planks'), inChest('oak_planks'))
    if (planks > 0) moves.push(['withdraw', 'oak_planks', planks])
    for (const name of ['diamond', 'emerald']) {
      const n = 1 + Math.floor(random() * 7)
      if (random() < 0.5 && inChest(name) >= n) moves.push(['withdraw', name, n])
      else if (held(bot, name) >= n) moves.push(['deposit', name, n])
    }
    // Items with data (a named, enchanted sword; a shulker box full of items): one at a time.
    for (const name of ['diamond_sword', 'shulker_box']) {
      if (random() < 0.5) continue
      if (inChest(name) > 0) moves.push(['withdraw', name, 1])
      else if (held(bot, name) > 0) moves.push(['deposit', name, 1])
    }
    for (const [how, name, n] of moves) {
      if (!alive()) return
      const type = bot.registry.itemsByName[name].id
      try {
        await withTimeout(how === 'withdraw' ? chest.withdraw(type, null, n) : chest.deposit(type, null, n), 15000, how)
      } catch (e) {
        // The other player of the pair, in the same chest, took the last of it or filled the
        // chest first: this move ends there (what it moved before stays moved; each of
        // mineflayer's clicks is whole).
        const message = String(e && e.message)
        if (message.startsWith("Can't find") || message === 'destination full') {
          say({ event: 'raced', bot: cfg.name, what: how, item: name, message })
          continue
        }
        throw e
      }
      say({ event: 'action', bot: cfg.name, what: how, item: name, count: n })
    }
  } finally {
    chest.close()
  }
}

// Takes the furnace's input (raw iron) or fuel (coal) whole, or puts some of either back.
async function furnaceTrip (bot, cfg, random, alive) {
  const [fx, fy, fz] = cfg.furnace
  const block = bot.blockAt(new Vec3(fx, fy, fz))
  if (!block || block.name !== 'furnace') throw new Error(`no furnace at ${cfg.furnace}: ${block && block.name}`)
  const furnace = await withTimeout(bot.openFurnace(block), 15000, 'open the furnace')
  mirrorInventory(bot, furnace)
  try {
    for (const [slot, name] of [[0, 'raw_iron'], [1, 'coal']]) {
      if (!alive()) return
      if (random() < 0.5) continue
      const there = furnace.slots[slot]
      if (there && there.name === name && bot.inventory.emptySlotCount() > 0) {
        await withTimeout(bot.putAway(slot), 15000, 'take from the furnace')
        say({ event: 'action', bot: cfg.name, what: 'withdraw', item: name, count: there.count, from: 'furnace' })
      } else if (!there && held(bot, name) > 0) {
        const n = Math.min(held(bot, name), 1 + Math.floor(random() * 8))
        const type = bot.registry.itemsByName[name].id
        const put = slot === 0 ? furnace.putInput(type, null, n) : furnace.putFuel(type, null, n)
        await withTimeout(put, 15000, 'put into the furnace')
        say({ event: 'action', bot: cfg.name, what: 'deposit', item: name, count: n, from: 'furnace' })
      }
    }
  } finally {
    furnace.close()
  }
}

async function life (bot, cfg, random, alive) {
  const state = { dir: 1 }
  await walkTo(bot, cfg.lane.x0 + 0.5, cfg.lane.z + 0.5, alive)
  while (alive()) {
    if (held(bot, 'oak_planks') === 0 || random() < 0.2) {
      await chestTrip(bot, cfg, random, alive)
      if (alive() && cfg.furnace && random() < 0.5) await furnaceTrip(bot, cfg, random, alive)
    } else {
      await edit(bot, cfg, state, alive)
    }
  }
}

function connect (cfg, random) {
  const bot = mineflayer.createBot({
    host: args.host,
    port: args.port,
    username: cfg.name,
    auth: 'offline',
    version: '1.20.1',
    viewDistance: 'short'
  })
  let ended = false
  const alive = () => !ended
  bot.on('error', () => {})
  bot.on('kicked', (reason) => say({ event: 'kicked', bot: cfg.name, reason: JSON.stringify(reason) }))
  bot.once('end', () => {
    ended = true
    setTimeout(() => connect(cfg, random), 500)
  })
  bot.once('spawn', async () => {
    // The server sends the health update that fires `spawn` a tick after the join's
    // position and inventory, so both are read by now.
    if (!alive()) return
    const p = bot.entity.position
    const pos = [p.x, p.y, p.z]
    const items = counts(bot)
    say({ event: 'spawn', bot: cfg.name, uuid: bot.player ? bot.player.uuid : null, pos, items })
    try {
      await life(bot, cfg, random, alive)
    } catch (e) {
      if (alive()) {
        say({ event: 'stuck', bot: cfg.name, message: String(e && e.message) })
        bot.quit()
      }
    }
  })
}

args.bots.forEach((cfg, i) => connect(cfg, rng((args.seed || 1) * 1000 + i)))
