// A real Minecraft 1.20.1 client (mineflayer, offline mode) that joins a server and times
// its join: when it spawns, and when it holds every column of its view.
//
// Usage: node join.js '{"host":"127.0.0.1","port":25565,"username":"bot","viewDistance":10,
//   "timeoutMs":120000}'
// Reports {"event":"spawn","ms":T,"pos":[x,y,z],"dimension":D} when `spawn` fires, then
// {"event":"view","ms":T,"columns":N} once every column within `viewDistance` columns of its
// own (x² + z² ≤ d², N of them) is loaded, T counted from the start of the connection; then
// exits 0. On a failure or the timeout: {"event":"error","message"} and exit 1.
'use strict'

const mineflayer = require('mineflayer')

const args = JSON.parse(process.argv[2])
const say = (obj) => console.log(JSON.stringify(obj))
const fail = (message) => {
  say({ event: 'error', message })
  process.exit(1)
}
const timeout = args.timeoutMs || 120000
setTimeout(() => fail('timed out after ' + timeout + ' ms'), timeout)

const d = args.viewDistance || 10
const start = Date.now()
const bot = mineflayer.createBot({
  host: args.host,
  port: args.port,
  username: args.username || 'terrane_join',
  auth: 'offline',
  version: '1.20.1',
  viewDistance: d
})
bot.on('kicked', (reason) => fail('kicked: ' + JSON.stringify(reason)))
bot.on('error', (e) => fail('connection error: ' + e.message))
bot.on('end', (reason) => fail('disconnected: ' + reason))

const loaded = new Set()
let center = null
let wanted = null
let reported = false
const check = () => {
  if (reported || center === null) return
  for (const key of wanted) if (!loaded.has(key)) return
  reported = true
  say({ event: 'view', ms: Date.now() - start, columns: wanted.length })
  process.exit(0)
}
bot.on('chunkColumnLoad', (p) => {
  loaded.add((p.x >> 4) + ',' + (p.z >> 4))
  check()
})
bot.on('chunkColumnUnload', (p) => loaded.delete((p.x >> 4) + ',' + (p.z >> 4)))
bot.once('spawn', () => {
  const p = bot.entity.position
  say({ event: 'spawn', ms: Date.now() - start, pos: [p.x, p.y, p.z], dimension: bot.game.dimension })
  const cx = Math.floor(p.x / 16)
  const cz = Math.floor(p.z / 16)
  wanted = []
  for (let x = -d; x <= d; x++) {
    for (let z = -d; z <= d; z++) {
      if (x * x + z * z <= d * d) wanted.push((cx + x) + ',' + (cz + z))
    }
  }
  center = [cx, cz]
  check()
})
