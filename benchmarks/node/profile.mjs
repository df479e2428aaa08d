// Where the floor's and mcp-otel's time per call goes: V8 CPU profiles (--cpu-prof) of both
// variants' processes (the worker and, over stdio, its server), the samples taken while the
// measured calls ran, each sample's time given to its owner: the nearest frame on its stack
// that is mcp-otel's (node/dist), the floor's (benchmarks/node/common.mjs), the MCP SDK's or the
// benchmark's own; OpenTelemetry's and Node's frames belong to whoever called them.
//
//   node benchmarks/node/profile.mjs [--sdk 1] [--transport memory] [--variant floor --variant mcp-otel]
//                                    [--calls 20000] [--dir DIR] [--top 25] [--output FILE]
// (a candidate build: --variant candidate:NAME with MCP_BENCH_CANDIDATES='{"NAME": "DIR"}')
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NODE_DIR, SDKS, TRANSPORTS, Worker } from './common.mjs';

const { values: options } = parseArgs({
  options: {
    sdk: { type: 'string', multiple: true },
    transport: { type: 'string', multiple: true },
    variant: { type: 'string', multiple: true },
    calls: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '20000' },
    dir: { type: 'string', default: '/tmp/mcp-otel-profiles' },
    top: { type: 'string', default: '25' },
    output: { type: 'string' },
    interval: { type: 'string', default: '100' },
  },
});
const CALLS = Number(options.calls);
const TOP = Number(options.top);
const DIST = join(NODE_DIR, 'dist');

function ownerOf(frame) {
  const url = frame.url ?? '';
  // mcp-otel's build, or a candidate's (MCP_BENCH_CANDIDATES): a dist/ outside node_modules.
  if ((url.includes(DIST) || /\/dist\/(cjs|esm)\//.test(url)) && !url.includes('node_modules')) return 'mcp-otel';
  if (url.includes('benchmarks/node/common.mjs')) return frame.functionName.startsWith('floor') ? 'floor' : 'bench';
  if (url.includes('@modelcontextprotocol')) return 'mcp-sdk';
  if (url.includes('benchmarks/node/')) return 'bench';
  if (url.includes('zod')) return 'mcp-sdk';
  return undefined; // OpenTelemetry, Node's internals, natives: the caller's
}

function frameName(frame) {
  let url = (frame.url ?? '').replace(/^file:\/\//, '');
  url = url.includes('node_modules/') ? url.replace(/.*node_modules\//, '') : url.replace(DIST, 'dist').replace(/^.*\/dist\//, 'dist/');
  return `${frame.functionName || '(anonymous)'} ${url ? `${url}:${frame.lineNumber + 1}` : ''}`.trim();
}

/** The samples of `profile` between `from` and `to` (µs, monotonic), by owner and by function. */
function analyse(profile, from, to) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const owners = new Map(); // owner -> µs
  const selfOf = new Map(); // `${owner}\t${leaf}` -> µs
  const byOwnerFrame = new Map(); // `${owner}\t${owning function}` -> µs
  const byEntry = new Map(); // `${owner}\t${what it called}` -> µs: OpenTelemetry's entry points
  let time = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i];
    // Each sample counts once (its time delta would count the time the process waited for a
    // CPU on a busy machine); shares of samples are scaled to the process's measured CPU.
    const weight = 1;
    if (time < from || time > to) continue;
    const leaf = nodes.get(profile.samples[i]);
    const leafName = frameName(leaf.callFrame);
    if (leaf.callFrame.functionName === '(idle)') continue;
    total += weight;
    let owner;
    let owning;
    let entry = '(its own code)';
    for (let id = leaf.id, below; id !== undefined; below = id, id = parents.get(id)) {
      const frame = nodes.get(id).callFrame;
      owner = ownerOf(frame);
      if (owner) {
        owning = frameName(frame);
        if (below !== undefined) entry = frameName(nodes.get(below).callFrame);
        break;
      }
    }
    if (!owner) owner = ['(garbage collector)', '(program)'].includes(leaf.callFrame.functionName) ? leaf.callFrame.functionName : 'other (no owner on the stack)';
    owners.set(owner, (owners.get(owner) ?? 0) + weight);
    const key = `${owner}\t${leafName}`;
    selfOf.set(key, (selfOf.get(key) ?? 0) + weight);
    if (owning) byOwnerFrame.set(`${owner}\t${owning}`, (byOwnerFrame.get(`${owner}\t${owning}`) ?? 0) + weight);
    if (owning) byEntry.set(`${owner}\t${entry}`, (byEntry.get(`${owner}\t${entry}`) ?? 0) + weight);
  }
  return { total, owners, selfOf, byOwnerFrame, byEntry };
}

async function profileOf(sdk, transport, variant) {
  const dir = join(options.dir, `v${sdk}-${transport}-${variant}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'client'), { recursive: true });
  mkdirSync(join(dir, 'server'), { recursive: true });
  const prof = (to) => ['--cpu-prof', `--cpu-prof-dir=${to}`, `--cpu-prof-interval=${options.interval}`];
  const worker = new Worker(sdk, transport, variant, {
    execArgv: prof(join(dir, 'client')),
    env: { ...process.env, MCP_BENCH_SERVER_NODE_ARGS: prof(join(dir, 'server')).join(' ') },
  });
  await worker.ready;
  await worker.ask('batch', { n: Number(options.warmup) });
  const measured = await worker.ask('batch', { n: CALLS });
  await worker.close();
  await worker.exited;
  await new Promise((resolve) => setTimeout(resolve, 300)); // the server's profile, written at its exit
  const results = [];
  for (const side of ['client', 'server']) {
    for (const file of readdirSync(join(dir, side))) {
      const profile = JSON.parse(readFileSync(join(dir, side, file), 'utf8'));
      const found = analyse(profile, measured.from, measured.to);
      // Samples to µs: the process's CPU in the measured calls (getrusage, /proc) over its samples.
      const cpu = side === 'client' ? measured.client : measured.server;
      const scale = cpu / found.total;
      for (const map of [found.owners, found.selfOf, found.byOwnerFrame, found.byEntry]) {
        for (const [key, value] of map) map.set(key, value * scale);
      }
      results.push({ side, file: join(dir, side, file), samples: found.total, ...found, total: cpu });
    }
  }
  return { sdk, transport, variant, measured, results };
}

const us = (value) => (value / CALLS).toFixed(2);

function report({ sdk, transport, variant, measured, results }) {
  const lines = [`## v${sdk} ${transport} ${variant}: ${CALLS} calls, ${us(measured.client + measured.server)} µs CPU per call (getrusage/schedstat)`];
  for (const { side, total, samples, owners, selfOf, byOwnerFrame, byEntry } of results) {
    lines.push('', `### ${side} process: ${us(total)} µs CPU per call, ${samples} samples`, '', '| owner | µs per call |', '|---|---:|');
    for (const [owner, time] of [...owners].sort((a, b) => b[1] - a[1])) lines.push(`| ${owner} | ${us(time)} |`);
    for (const owner of ['mcp-otel', 'floor']) {
      const owning = [...byOwnerFrame].filter(([key]) => key.startsWith(`${owner}\t`)).sort((a, b) => b[1] - a[1]);
      if (!owning.length) continue;
      lines.push('', `${owner}'s functions (their own time and what they called outside mcp-otel and the MCP SDK):`, '', '| function | µs per call |', '|---|---:|');
      for (const [key, time] of owning.slice(0, TOP)) lines.push(`| ${key.split('\t')[1]} | ${us(time)} |`);
      const entries = [...byEntry].filter(([key]) => key.startsWith(`${owner}\t`)).sort((a, b) => b[1] - a[1]);
      lines.push('', `${owner}'s time by what it called (its own code, or the OpenTelemetry or Node function it called):`, '', '| called | µs per call |', '|---|---:|');
      for (const [key, time] of entries.slice(0, TOP)) lines.push(`| ${key.split('\t')[1]} | ${us(time)} |`);
      const leaves = [...selfOf].filter(([key]) => key.startsWith(`${owner}\t`)).sort((a, b) => b[1] - a[1]);
      lines.push('', `${owner}'s time by the function running (self time; OpenTelemetry's and Node's included):`, '', '| function | µs per call |', '|---|---:|');
      for (const [key, time] of leaves.slice(0, TOP)) lines.push(`| ${key.split('\t')[1]} | ${us(time)} |`);
    }
  }
  return lines.join('\n');
}

const out = [];
for (const sdk of options.sdk ?? SDKS) {
  for (const transport of options.transport ?? TRANSPORTS) {
    for (const variant of options.variant ?? ['floor', 'mcp-otel']) {
      const found = await profileOf(sdk, transport, variant);
      const text = report(found);
      console.log(`${text}\n`);
      out.push(text);
    }
  }
}
if (options.output) writeFileSync(options.output, `${out.join('\n\n')}\n`);
