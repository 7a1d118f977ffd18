// A real Minecraft 1.20.1 client (mineflayer, offline mode) that joins a server and plays a
// list of steps, reporting each as a JSON line on stdout as soon as it is done, so that a
// test can act between steps (restore an area while the bot waits to see it back).
//
// Usage: node steps.js '{"host":"127.0.0.1","port":25565,"username":"bot","timeoutMs":90000,
//   "steps":[{"see":{"pos":[3,65,3],"name":"gold_block"}},
//            {"dig":[3,65,3]},
//            {"see":{"pos":[3,65,3],"name":"gold_block"},"waitMs":60000},
//            {"place":{"against":[7,64,7],"item":"diamond_block"}}]}'
// Steps: `see` waits until the block at `pos` is `name` (its chunk loaded first), `dig`
// digs a block and waits to see air there, `place` places an item on top of a block and
// waits to see it (`nbt`: the item's data, in prismarine-nbt's form), `chest`
// ({"chest":[x,y,z],"item":"diamond","expect":5,"take":5}) opens a chest, waits to see
// `expect` of `item` in it, takes `take` of them and closes it, `look` ({"look":[x,y,z]},
// `"empty":true` for one that holds nothing) opens a container (chest, barrel, ender chest,
// shulker box, hopper, dispenser, dropper, furnace, smoker, blast furnace, brewing stand) and
// reports its slots and what it holds (each stack's name, count, custom name and
// enchantments), `put` ({"put":[x,y,z],"item":"coal","count":3,"slot":1}) takes `count` of
// `item` in the first hotbar slot (creative), opens the container there and clicks them into
// its slot `slot`, waits until the window shows them there and closes it, `sign` ({"sign":[x,y,z],"text":"hello"}) waits
// until the sign there reads `text` on its front and reports its two sides, `write`
// ({"write":{"against":[x,y,z],"text":"hello"}}) places an oak sign on top of a block,
// writes `text` on its front and waits until the server shows it back, `forgeSign`
// ({"forgeSign":[x,y,z],"text":"hello"}) sends the sign there new front text without
// looking or walking (a modified client's packet) and waits for nothing, `enter`
// ({"enter":[x,y,z],"dimension":"the_nether","feet":"nether_portal"}) steps into the block
// there (a portal) and waits until the server has moved it into that dimension (and, given
// `feet`, until that block is at its feet), then reports where it is and the block at its
// feet. It
// reports {"event":"spawn","pos":[x,y,z]} on joining (where the player is as `spawn`
// fires), then {"event":"step","index":i,...} for each step. After the last step it
// waits for the server's `saved N` in the tab list footer and reports it
// ({"event":"footer","text":"saved N"}), then exits 0; 1 with an {"event":"error"} line
// otherwise.
'use strict'

const mineflayer = require('mineflayer')
const { Vec3 } = require('vec3')

const args = JSON.parse(process.argv[2])
const say = (obj) => console.log(JSON.stringify(obj))
const fail = (message) => {
  say({ event: 'error', message })
  process.exit(1)
}
const at = (p) => new Vec3(p[0], p[1], p[2])
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const containers = ['chest', 'ender_chest', 'barrel', 'shulker_box', 'hopper', 'dispenser', 'dropper',
  'furnace', 'smoker', 'blast_furnace', 'brewing_stand']

async function until (what, test, ms = 20000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (test()) return
    await sleep(50)
  }
  throw new Error(`timed out waiting for ${what}`)
}

// Puts one `name` (with item data `nbt`, prismarine-nbt's form, when given) in the first
// hotbar slot (creative) and holds it.
async function hold (name, wait, nbt, count) {
  const Item = require('prismarine-item')(bot.registry)
  const item = bot.registry.itemsByName[name]
  if (!item) fail(`no item ${name}`)
  try {
    await bot.creative.setInventorySlot(36, new Item(item.id, count || 1, nbt || null))
  } catch (e) {
    // mineflayer gives the server 5 s to confirm the slot; a slow tick on a busy machine
    // can take longer: the wait below (the step's own) decides.
    if (!String(e && e.message).includes('did not fire within timeout')) throw e
  }
  bot.setQuickBarSlot(0)
  await until(`${name} in hand`, () => bot.heldItem && bot.heldItem.name === name, wait)
}

setTimeout(() => fail('timed out after ' + (args.timeoutMs || 90000) + ' ms'), args.timeoutMs || 90000)

const bot = mineflayer.createBot({
  host: args.host,
  port: args.port,
  username: args.username || 'terrane_bot',
  auth: 'offline',
  version: '1.20.1'
})
bot.on('kicked', (reason) => fail('kicked: ' + JSON.stringify(reason)))
bot.on('error', (e) => fail('connection error: ' + e.message))
bot.on('end', (reason) => { if (!done) fail('disconnected: ' + reason) })
let done = false

bot.once('spawn', async () => {
  try {
    const name = (pos) => { const b = bot.blockAt(at(pos)); return b ? b.name : null }
    const p = bot.entity.position // as the server placed the player before its health
    say({ event: 'spawn', pos: [p.x, p.y, p.z] })
    for (const [index, step] of args.steps.entries()) {
      const wait = step.waitMs || 30000
      if (step.see) {
        const { pos, name: want } = step.see
        await until(`${want} at ${pos}`, () => name(pos) === want, wait)
        say({ event: 'step', index, saw: want, pos })
      } else if (step.dig) {
        await until(`the chunk of ${step.dig}`, () => name(step.dig) !== null, wait)
        const was = name(step.dig)
        await bot.dig(bot.blockAt(at(step.dig)), true)
        await until(`air at ${step.dig}`, () => name(step.dig) === 'air', wait)
        say({ event: 'step', index, dug: step.dig, was })
      } else if (step.place) {
        const { against, item: want, nbt } = step.place
        await hold(want, wait, nbt)
        await until(`the chunk of ${against}`, () => name(against) !== null, wait)
        try {
          await bot.placeBlock(bot.blockAt(at(against)), new Vec3(0, 1, 0))
        } catch (e) {
          // mineflayer waits 5 s for the server's block update; the wait below decides.
          if (!String(e && e.message).includes('did not fire within timeout')) throw e
        }
        const placed = [against[0], against[1] + 1, against[2]]
        await until(`${want} at ${placed}`, () => name(placed) === want, wait)
        say({ event: 'step', index, placed, name: want })
      } else if (step.chest) {
        const { chest: pos, item, expect, take } = step
        await until(`the chunk of ${pos}`, () => name(pos) === 'chest', wait)
        const window = await bot.openContainer(bot.blockAt(at(pos)))
        const count = () => window.containerItems().filter((i) => i.name === item).reduce((n, i) => n + i.count, 0)
        await until(`${expect} ${item} in the chest at ${pos}`, () => count() === expect, wait)
        if (take > 0) await window.withdraw(bot.registry.itemsByName[item].id, null, take)
        window.close()
        say({ event: 'step', index, chest: pos, had: expect, took: take || 0 })
      } else if (step.write) {
        const { against, text: want } = step.write
        await hold('oak_sign', wait)
        await until(`the chunk of ${against}`, () => name(against) !== null, wait)
        try {
          await bot.placeBlock(bot.blockAt(at(against)), new Vec3(0, 1, 0))
        } catch (e) {
          if (!String(e && e.message).includes('did not fire within timeout')) throw e
        }
        const placed = [against[0], against[1] + 1, against[2]]
        await until(`a sign at ${placed}`, () => name(placed) === 'oak_sign', wait)
        bot.updateSign(bot.blockAt(at(placed)), want)
        const text = () => { const b = bot.blockAt(at(placed)); return b && b.getSignText ? b.getSignText()[0] : '' }
        await until(`"${want}" on the sign at ${placed}`, () => text().includes(want), wait)
        say({ event: 'step', index, wrote: placed, text: text() })
      } else if (step.look) {
        const pos = step.look
        await until(`the chunk of ${pos}`, () => containers.includes(name(pos)), wait)
        const window = await bot.openBlock(bot.blockAt(at(pos)))
        if (!step.empty) await until(`the items of the container at ${pos}`, () => window.containerItems().length > 0, wait)
        const items = window.containerItems().map((i) => ({
          slot: i.slot,
          name: i.name,
          count: i.count,
          customName: i.customName || null,
          enchants: (i.enchants || []).map((e) => [e.name, e.lvl])
        }))
        const slots = window.inventoryStart
        window.close()
        say({ event: 'step', index, look: pos, slots, items })
      } else if (step.put) {
        const { put: pos, item, count, slot } = step
        await hold(item, wait, null, count)
        await until(`the chunk of ${pos}`, () => containers.includes(name(pos)), wait)
        const window = await bot.openBlock(bot.blockAt(at(pos)))
        await bot.clickWindow(window.inventoryStart + 27, 0, 0) // the first hotbar slot
        await bot.clickWindow(slot, 0, 0)
        const there = () => { const s = window.slots[slot]; return s && s.name === item && s.count === count }
        await until(`${count} ${item} in slot ${slot} of the container at ${pos}`, there, wait)
        window.close()
        say({ event: 'step', index, put: pos, slot, item, count })
      } else if (step.forgeSign) {
        // What a modified client can send: new text for the sign at `forgeSign`, wherever
        // the player stands (the server decides whether it is within reach).
        const p = step.forgeSign
        bot._client.write('update_sign', {
          location: { x: p[0], y: p[1], z: p[2] },
          isFrontText: true,
          text1: step.text,
          text2: '',
          text3: '',
          text4: ''
        })
        say({ event: 'step', index, forgeSign: p })
      } else if (step.enter) {
        // Steps into the block at `enter` (a portal: the client moves itself there, as a
        // player walking in) and waits to be in dimension `dimension`, moved by the server,
        // with the block at its feet loaded; reports where it is and that block.
        const from = bot.game.dimension
        bot.entity.position = at(step.enter).offset(0.5, 0, 0.5)
        await until(`the dimension ${step.dimension}`, () => String(bot.game.dimension).endsWith(step.dimension), wait)
        const moved = () => bot.entity.position.distanceTo(at(step.enter).offset(0.5, 0, 0.5)) > 1
        await until('the position the server gives', moved, wait)
        const p = bot.entity.position
        const feet = () => bot.blockAt(p.floored())
        await until(`the block at ${p}`, () => feet() !== null, wait)
        if (step.feet) await until(`${step.feet} at ${p}`, () => feet().name === step.feet, wait)
        say({ event: 'step', index, entered: step.enter, from, dimension: bot.game.dimension, pos: [p.x, p.y, p.z], feet: feet().name })
      } else if (step.sign) {
        const pos = step.sign
        const text = () => { const b = bot.blockAt(at(pos)); return b && b.getSignText ? b.getSignText() : null }
        await until(`"${step.text}" on the sign at ${pos}`, () => { const t = text(); return t && t[0].includes(step.text) }, wait)
        say({ event: 'step', index, sign: pos, text: text() })
      } else {
        fail('unknown step ' + JSON.stringify(step))
      }
    }
    const footer = () => (bot.tablist && bot.tablist.footer ? bot.tablist.footer.toString() : '')
    await until('`saved N` in the tab list footer', () => footer().startsWith('saved '), 30000)
    say({ event: 'footer', text: footer() })
    done = true
    bot.quit()
    say({ event: 'done' })
    setTimeout(() => process.exit(0), 200)
  } catch (e) {
    fail(e && e.stack ? e.stack : String(e))
  }
})
