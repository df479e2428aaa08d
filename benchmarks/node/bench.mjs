// The Node benchmark: what mcp-otel (node/, the npm package) costs per tool call, beside the
// floor (its spans and points made by hand around the same call), for the MCP TypeScript SDK v1
// (@modelcontextprotocol/sdk) and v2 (@modelcontextprotocol/client, /server), in memory and over
// stdio; and whether its heap stays flat over 100,000 calls. Needs node/ built (`make node`).
//
//   node benchmarks/node/bench.mjs [--output FILE.json] [--quick] [--strict]
//       [--sdk 1|2]... [--transport memory|stdio]... [--candidate NAME=DIR]...
//       [--rounds N] [--calls N] [--warmup N] [--memory-calls N]
//       [--no-cpu] [--no-memory] [--instructions | --no-instructions] [--instruction-calls N1,N2]
//
// Variants: bare (the uninstrumented `client.callTool`), floor (the same call, mcp-otel's two
// spans and two points made by hand, the context carried in a copied `_meta`) and mcp-otel
// (`new McpInstrumentation()`), all on the same OpenTelemetry SDK; `--candidate NAME=DIR` adds
// another build of mcp-otel (a built node/ directory) to the same run: a change's effect.
//
// 1. CPU per call (the target): each variant in its own long-lived worker process (worker.mjs),
//    all started at once; round after round, each worker in a shuffled order runs a batch of
//    sequential calls and answers the CPU time they took (user + system, every thread): its own
//    process's and, over stdio, its server process's (/proc/<pid>/task/*/schedstat). Per
//    variant the median over rounds; added cost = variant − bare; ratio = mcp-otel's added ÷ the
//    floor's, target <= 1.10 (also: its 90% interval, rounds resampled; the median of each
//    round's own ratio).
// 2. Instructions per call under cachegrind (when valgrind is installed; not in --quick), in
//    memory: N2 and N1 calls in two processes, the difference ÷ (N2 − N1); runs A and B (B at
//    another memory layout). Not moved by the machine's load.
// 3. Heap used after a full collection every 10,000 of 100,000 calls (in memory, bare and
//    mcp-otel): growth from the 20,000th call to the last within 1 MiB.
//
// --quick (CI smoke, < 1 minute): few calls, no instructions; its ratios are noise. Exit status:
// non-zero if the check that the floor records what mcp-otel records fails, or a process fails;
// with --strict also if a target is missed. MCP_BENCH_NODE_DIR: measure a copy of node/ instead.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CANDIDATE_PREFIX, HERE, NODE_DIR, SDKS, TRANSPORTS, VARIANTS, Worker, versions } from './common.mjs';

const TARGET = 1.1;
// Heap growth allowed from the 20,000th call to the 100,000th. A leak of one small object per
// call (a 64-byte map entry) would be 5 MiB over those 80,000 calls; the heap of the
// uninstrumented SDK itself moves by a few hundred KiB between samples (code, feedback).
const MEMORY_BOUND = 1024 * 1024;

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    output: { type: 'string' },
    rounds: { type: 'string' },
    calls: { type: 'string' },
    warmup: { type: 'string' },
    'memory-calls': { type: 'string' },
    sdk: { type: 'string', multiple: true },
    transport: { type: 'string', multiple: true },
    candidate: { type: 'string', multiple: true },
    'no-memory': { type: 'boolean', default: false },
    'no-cpu': { type: 'boolean', default: false },
    instructions: { type: 'boolean' },
    'no-instructions': { type: 'boolean', default: false },
    'instruction-calls': { type: 'string' },
    'instruction-transport': { type: 'string', multiple: true },
    'instruction-runs': { type: 'string' },
    strict: { type: 'boolean', default: false },
    seed: { type: 'string' },
  },
});
const quick = options.quick;
const ROUNDS = Number(options.rounds ?? (quick ? 5 : 41));
const CALLS = Number(options.calls ?? (quick ? 300 : 2000));
const WARMUP = Number(options.warmup ?? (quick ? 1500 : 20000));
const MEMORY_CALLS = Number(options['memory-calls'] ?? (quick ? 4000 : 100000));
const MEMORY_EVERY = MEMORY_CALLS / 10;
// Instructions (cachegrind): two processes per variant, N1 and N2 calls after the same start.
const [N1, N2] = (options['instruction-calls'] ?? (quick ? '200,600' : '2000,6000')).split(',').map(Number);
const VALGRIND = spawnSync('valgrind', ['--version']).status === 0;
const INSTRUCTIONS = !options['no-instructions'] && (options.instructions ?? (!quick && VALGRIND));
// In memory only by default: over stdio, how the two processes' reads and writes interleave
// under valgrind moves a count by ±15% from run to run (CPU time measures stdio).
const instructionTransports = options['instruction-transport'] ?? ['memory'];
const sdks = options.sdk ?? SDKS;
const transports = options.transport ?? TRANSPORTS;
// --candidate NAME=DIR (repeatable): another build of mcp-otel, variant `candidate:NAME`.
const candidateDirs = Object.fromEntries((options.candidate ?? []).map((each) => {
  const at = each.indexOf('=');
  return at < 0 ? [each.split('/').filter(Boolean).pop(), each] : [each.slice(0, at), each.slice(at + 1)];
}));
if (options.candidate) process.env.MCP_BENCH_CANDIDATES = JSON.stringify(candidateDirs);
const variants = [...VARIANTS, ...Object.keys(candidateDirs).map((name) => CANDIDATE_PREFIX + name)];
const instrumented = variants.filter((variant) => variant !== 'bare' && variant !== 'floor');
let seed = Number(options.seed ?? 12345);

// A small seeded generator: each round's order is shuffled, reproducibly.
function random() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}
function shuffled(items) {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Statistics.

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (at - low);
}

/** `variant`'s added cost over bare ÷ the floor's, from the medians over rounds. */
function ratioOf(perRound, variant) {
  const bare = median(perRound.bare);
  return (median(perRound[variant]) - bare) / (median(perRound.floor) - bare);
}

/** The ratio's 90% interval: rounds resampled, each round's batches kept together. */
function bootstrap(perRound, variant, draws = 2000) {
  const n = perRound.bare.length;
  const ratios = [];
  for (let d = 0; d < draws; d++) {
    const sample = { bare: [], floor: [], [variant]: [] };
    for (let i = 0; i < n; i++) {
      const r = Math.floor(random() * n);
      for (const v of Object.keys(sample)) sample[v].push(perRound[v][r]);
    }
    ratios.push(ratioOf(sample, variant));
  }
  return [quantile(ratios, 0.05), quantile(ratios, 0.95)];
}

/** Medians, added costs and ratios of per-round figures (µs per call) of every variant. */
function summarise(perRound) {
  const med = Object.fromEntries(variants.map((v) => [v, median(perRound[v])]));
  const added = Object.fromEntries(variants.map((v) => [v, med[v] - med.bare]));
  const ratio = Object.fromEntries(instrumented.map((v) => [v, added[v] / added.floor]));
  return { median: med, added, ratio };
}

// ---------------------------------------------------------------------------------------------
// The check that floor and mcp-otel record the same data.

const summary = (data) => {
  const spans = [...data.spans, ...(data.server?.spans ?? [])].filter((span) => span.name === 'tools/call echo');
  const points = [...data.points, ...(data.server?.points ?? [])].filter(
    (point) => point.attributes['mcp.method.name'] === 'tools/call' && point.attributes['gen_ai.tool.name'] === 'echo',
  );
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  return {
    spans: spans
      .map((span) => {
        const { 'jsonrpc.request.id': id, ...attributes } = span.attributes;
        const parent = byId.get(span.parentSpanId);
        return JSON.stringify({
          kind: span.kind,
          attributes: Object.entries(attributes).sort(),
          hasRequestId: id !== undefined,
          parentKind: parent?.kind ?? null,
          sameTrace: parent === undefined || parent.traceId === span.traceId,
          status: span.status,
        });
      })
      .sort(),
    points: points.map((point) => JSON.stringify([point.metric, point.count, Object.entries(point.attributes).sort()])).sort(),
  };
};

async function verify(sdk, transport) {
  const results = {};
  for (const variant of ['floor', ...instrumented]) {
    const worker = new Worker(sdk, transport, variant, { mode: 'verify' });
    await worker.ready;
    const info = await worker.ask('info');
    if (info.patched !== (variant !== 'floor')) throw new Error(`${worker.name}: SDK patched: ${info.patched}`);
    results[variant] = summary(await worker.ask('telemetry', { n: 3 }));
    await worker.close();
  }
  for (const variant of instrumented) {
    // Three calls: a CLIENT and a SERVER span each, the SERVER span the CLIENT span's child.
    const ok = JSON.stringify(results.floor) === JSON.stringify(results[variant]) && results.floor.spans.length === 6;
    if (!ok) {
      console.error(JSON.stringify(results, null, 1));
      throw new Error(`v${sdk} ${transport}: the floor does not record what ${variant} records`);
    }
  }
  return { spansPerCall: results.floor.spans.length / 3, pointSeries: results.floor.points.length };
}

// ---------------------------------------------------------------------------------------------
// CPU per call.

async function cpu() {
  const configs = sdks.flatMap((sdk) => transports.map((transport) => ({ sdk, transport })));
  const workers = configs.flatMap(({ sdk, transport }) => variants.map((variant) => new Worker(sdk, transport, variant)));
  await Promise.all(workers.map((worker) => worker.ready));
  const batches = Object.fromEntries(workers.map((worker) => [worker.name, []]));
  try {
    // Warm-up (V8 optimises the hot paths over the first thousands of calls), interleaved too.
    for (let done = 0; done < WARMUP; done += CALLS) {
      for (const worker of shuffled(workers)) await worker.ask('batch', { n: Math.min(CALLS, WARMUP) });
    }
    const started = Date.now();
    for (let round = 0; round < ROUNDS; round++) {
      for (const worker of shuffled(workers)) {
        const { client, server, wall } = await worker.ask('batch', { n: CALLS });
        batches[worker.name].push({ client: client / CALLS, server: server / CALLS, total: (client + server) / CALLS, wall: wall / CALLS });
      }
      process.stderr.write(`\rround ${round + 1}/${ROUNDS} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
    process.stderr.write('\n');
  } finally {
    await Promise.all(workers.map((worker) => worker.close()));
  }
  return configs.map(({ sdk, transport }) => {
    const of = (key) => Object.fromEntries(variants.map((v) => [v, batches[`v${sdk} ${transport} ${v}`].map((batch) => batch[key])]));
    const perRound = of('total');
    const found = summarise(perRound);
    return {
      sdk,
      transport,
      ...found,
      iqr: Object.fromEntries(variants.map((v) => [v, quantile(perRound[v], 0.75) - quantile(perRound[v], 0.25)])),
      interval90: Object.fromEntries(instrumented.map((v) => [v, bootstrap(perRound, v)])),
      // Each round's own ratio (its batches ran minutes apart at most): their median.
      pairedMedianRatio: Object.fromEntries(
        instrumented.map((v) => [v, median(perRound.bare.map((bare, i) => (perRound[v][i] - bare) / (perRound.floor[i] - bare)))]),
      ),
      met: Object.fromEntries(instrumented.map((v) => [v, found.ratio[v] <= TARGET])),
      byProcess: transport === 'stdio' ? { client: summarise(of('client')), server: summarise(of('server')) } : undefined,
      wallMedian: Object.fromEntries(Object.entries(of('wall')).map(([v, values]) => [v, median(values)])),
      batches: Object.fromEntries(variants.map((v) => [v, batches[`v${sdk} ${transport} ${v}`]])),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Instructions per call (cachegrind): not moved by the machine's load.

/**
 * Instructions executed by a worker making `calls` calls (`count` mode), its stdio server's
 * included. `pad`: bytes of extra environment (run B: every process at another memory layout).
 */
function counted(sdk, transport, variant, calls, pad) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'valgrind',
      // --fair-sched: else two single-threaded processes under valgrind answer each other slowly.
      ['--tool=cachegrind', '--cache-sim=no', '--trace-children=yes', '--fair-sched=yes', '--cachegrind-out-file=/dev/null',
        process.execPath, '--single-threaded', join(HERE, 'worker.mjs'), sdk, transport, variant, 'count', String(calls)],
      // Single-threaded (V8's GC and compiler threads would make counts vary), the server too.
      {
        env: { ...process.env, MCP_BENCH_SERVER_NODE_ARGS: '--single-threaded', MCP_BENCH_PAD: 'x'.repeat(pad) },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('exit', (code) => {
      // Every process's total ("==pid== I   refs:  1,234"), by its command: the worker, its server.
      const commands = new Map([...stderr.matchAll(/==(\d+)== Command: (.*)/g)].map((match) => [match[1], match[2]]));
      const totals = { client: 0, server: 0 };
      let found = 0;
      for (const [, pid, count] of stderr.matchAll(/==(\d+)== I\s+refs:\s+([\d,]+)/g)) {
        totals[commands.get(pid)?.includes('server.mjs') ? 'server' : 'client'] += Number(count.replaceAll(',', ''));
        found++;
      }
      const expected = transport === 'stdio' ? 2 : 1;
      if (code !== 0 || found !== expected) reject(new Error(`v${sdk} ${transport} ${variant} ${calls} calls under cachegrind: exit ${code}, ${found} totals\n${stderr.slice(-2000)}`));
      else resolve(totals);
    });
  });
}

// Runs A and B: the same programs, B with 1,000 more bytes of environment (every address moves).
const RUNS = Object.fromEntries(
  Object.entries({ A: 0, B: 1000 }).filter(([run]) => (options['instruction-runs'] ?? 'A,B').split(',').includes(run)),
);

async function instructions() {
  const jobs = [];
  for (const [run, pad] of Object.entries(RUNS)) {
    for (const sdk of sdks) {
      for (const transport of instructionTransports) {
        for (const variant of variants) for (const calls of [N1, N2]) jobs.push({ run, pad, sdk, transport, variant, calls });
      }
    }
  }
  const counts = new Map();
  const key = ({ run, sdk, transport, variant, calls }) => `${run} v${sdk} ${transport} ${variant} ${calls}`;
  let next = 0;
  const started = Date.now();
  const runner = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      counts.set(key(job), await counted(job.sdk, job.transport, job.variant, job.calls, job.pad));
      process.stderr.write(`\rcachegrind ${counts.size}/${jobs.length} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, cpus().length) }, runner));
  process.stderr.write('\n');
  const results = [];
  for (const sdk of sdks) {
    for (const transport of instructionTransports) {
      const byRun = {};
      for (const run of Object.keys(RUNS)) {
        const perCallOf = (side) => Object.fromEntries(variants.map((variant) => {
          const [low, high] = [N1, N2].map((calls) => counts.get(key({ run, sdk, transport, variant, calls })));
          const sum = (total) => (side ? total[side] : total.client + total.server);
          return [variant, (sum(high) - sum(low)) / (N2 - N1)];
        }));
        const summarised = (perCall) => {
          const added = Object.fromEntries(variants.map((v) => [v, perCall[v] - perCall.bare]));
          const ratio = Object.fromEntries(instrumented.map((v) => [v, added[v] / added.floor]));
          return { perCall, added, ratio };
        };
        byRun[run] = {
          ...summarised(perCallOf()),
          byProcess: transport === 'stdio' ? { client: summarised(perCallOf('client')), server: summarised(perCallOf('server')) } : undefined,
        };
      }
      const worse = Object.fromEntries(instrumented.map((v) => [v, Math.max(...Object.values(byRun).map((r) => r.ratio[v]))]));
      results.push({ sdk, transport, calls: [N1, N2], runs: byRun, worse, met: Object.fromEntries(instrumented.map((v) => [v, worse[v] <= TARGET])) });
    }
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Memory over many calls.

async function memory(sdk, variant) {
  const worker = new Worker(sdk, 'memory', variant, { execArgv: ['--expose-gc'] });
  await worker.ready;
  try {
    const samples = await worker.ask('memory', { total: MEMORY_CALLS, every: MEMORY_EVERY });
    const reference = samples.find((sample) => sample.calls === 2 * MEMORY_EVERY).heapUsed;
    const later = samples.filter((sample) => sample.calls >= 2 * MEMORY_EVERY).map((sample) => sample.heapUsed);
    const growth = later[later.length - 1] - reference;
    return { sdk, variant, samples, reference: 2 * MEMORY_EVERY, growth, peakGrowth: Math.max(...later) - reference, bound: MEMORY_BOUND, met: growth <= MEMORY_BOUND };
  } finally {
    await worker.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Output.

const f = (value, digits = 1) => value.toFixed(digits);
const signed = (value, digits = 1) => `${value >= 0 ? '+' : ''}${f(value, digits)}`;
const mib = (bytes) => (bytes / 1024 / 1024).toFixed(2);

function table(results) {
  const lines = [
    '| SDK | transport | variant | bare µs | floor µs | variant µs | floor added | variant added | ratio | 90% interval | paired median | <= 1.10 |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    for (const v of instrumented) {
      const [low, high] = r.interval90[v];
      lines.push(
        `| v${r.sdk} | ${r.transport} | ${v} | ${f(r.median.bare)} | ${f(r.median.floor)} | ${f(r.median[v])} | ${signed(r.added.floor)} | ${signed(r.added[v])} | ${f(r.ratio[v], 2)} | ${f(low, 2)}–${f(high, 2)} | ${f(r.pairedMedianRatio[v], 2)} | ${r.met[v] ? 'met' : 'MISSED'} |`,
      );
    }
  }
  const stdio = results.filter((r) => r.byProcess);
  if (stdio.length) {
    lines.push('', 'Over stdio, by process (median CPU µs per call, added over bare, ratio to the floor\'s):', '');
    lines.push(`| SDK | process | bare | floor added | ${instrumented.map((v) => `${v} added | ratio`).join(' | ')} |`);
    lines.push(`|---|---|---:|---:|${instrumented.map(() => '---:|---:').join('|')}|`);
    for (const r of stdio) {
      for (const side of ['client', 'server']) {
        const s = r.byProcess[side];
        lines.push(`| v${r.sdk} | ${side} | ${f(s.median.bare)} | ${signed(s.added.floor)} | ${instrumented.map((v) => `${signed(s.added[v])} | ${f(s.ratio[v], 2)}`).join(' | ')} |`);
      }
    }
  }
  return lines.join('\n');
}

function instructionTable(results) {
  const k = (value) => `${value >= 0 ? '+' : ''}${Math.round(value / 1000).toLocaleString('en')}k`;
  const lines = [
    '| SDK | transport | variant | bare / call (A) | floor added (A) | variant added (A) | ratio A | ratio B | <= 1.10 (worse) |',
    '|---|---|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    const { A, B = A } = r.runs;
    for (const v of instrumented) {
      lines.push(
        `| v${r.sdk} | ${r.transport} | ${v} | ${Math.round(A.perCall.bare).toLocaleString('en')} | ${k(A.added.floor)} | ${k(A.added[v])} | ${f(A.ratio[v], 2)} | ${f(B.ratio[v], 2)} | ${r.met[v] ? 'met' : 'MISSED'} (${f(r.worse[v], 2)}) |`,
      );
    }
  }
  return lines.join('\n');
}

function memoryTable(results) {
  const head = results[0].samples.map((sample) => `${sample.calls / 1000}k`);
  const lines = [`| SDK | variant | ${head.join(' | ')} | growth from ${results[0].reference / 1000}k | peak growth | <= ${mib(MEMORY_BOUND)} MiB |`];
  lines.push(`|---|---|${head.map(() => '---:').join('|')}|---:|---:|---|`);
  for (const r of results) {
    lines.push(
      `| v${r.sdk} | ${r.variant} | ${r.samples.map((sample) => mib(sample.heapUsed)).join(' | ')} | ${signed(r.growth / 1024, 0)} KiB | ${signed(r.peakGrowth / 1024, 0)} KiB | ${r.met ? 'met' : 'MISSED'} |`,
    );
  }
  return lines.join('\n');
}

async function main() {
  const output = {
    command: process.argv.slice(1).join(' '),
    nodeDir: NODE_DIR,
    candidates: candidateDirs,
    versions: versions(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model },
    settings: { quick, rounds: ROUNDS, calls: CALLS, warmup: WARMUP, memoryCalls: MEMORY_CALLS, target: TARGET, memoryBound: MEMORY_BOUND },
  };
  console.log(
    `mcp-otel ${output.versions['mcp-otel']} (${NODE_DIR}), node ${process.version}, ${output.machine.cpus} cores; ` +
      `${ROUNDS} rounds of ${CALLS} calls per variant after ${WARMUP} warm-up calls`,
  );

  output.verified = {};
  for (const sdk of sdks) {
    for (const transport of transports) output.verified[`v${sdk} ${transport}`] = await verify(sdk, transport);
  }
  console.log(`verified: the floor records the same spans (kind, name, attributes, parent) and points as ${instrumented.join(' and ')}: ${Object.keys(output.verified).join(', ')}`);

  let failed = false;
  if (!options['no-cpu']) {
    output.cpu = await cpu();
    console.log('\nCPU µs per tools/call, both sides (median over rounds):\n');
    console.log(table(output.cpu));
    failed ||= output.cpu.some((r) => !r.met['mcp-otel']);
  }
  if (INSTRUCTIONS) {
    output.instructions = await instructions();
    console.log(`\nInstructions per tools/call under cachegrind (the difference of ${N2} and ${N1} calls ÷ ${N2 - N1}, node --single-threaded; run B: another memory layout):\n`);
    console.log(instructionTable(output.instructions));
    failed ||= output.instructions.some((r) => !r.met['mcp-otel']);
  } else if (!quick && !VALGRIND) {
    console.log('\n(valgrind not found: no instruction counts)');
  }
  if (!options['no-memory']) {
    output.memory = [];
    for (const sdk of sdks) for (const variant of ['bare', ...instrumented]) output.memory.push(await memory(sdk, variant));
    console.log(`\nHeap used after a full collection (MiB), in memory, every ${MEMORY_EVERY} calls:\n`);
    console.log(memoryTable(output.memory));
    failed ||= output.memory.some((r) => r.variant !== 'bare' && !r.met);
  }
  if (options.output) writeFileSync(options.output, `${JSON.stringify(output, null, 2)}\n`);
  if (failed && options.strict) process.exitCode = 1;
}

await main();
