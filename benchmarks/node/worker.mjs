// One variant of the Node benchmark in its own long-lived process (forked by bench.mjs, which
// asks it for batches of calls over IPC, interleaved with the other variants' workers).
//
//   node worker.mjs <sdk 1|2> <memory|stdio> <variant> [verify]
//   node worker.mjs <sdk 1|2> <memory|stdio> <variant> count <calls>
//
// In memory, the echo server runs in this process (both sides' CPU is this process's); over
// stdio it is a child process (server.mjs, the same variant), and its CPU is read from /proc.
import { join } from 'node:path';
import {
  CALL,
  CLIENT_INFO,
  HERE,
  echoServer,
  floor as makeFloor,
  instrumentFor,
  mcpSdk,
  processCpuNs,
  selfCpuUs,
  telemetry,
} from './common.mjs';

const [sdk, transport, variant, mode] = process.argv.slice(2);
const verify = mode === 'verify';
const otel = telemetry({ verify });
const instrumentation = instrumentFor(variant, sdk, otel);
const floor = variant === 'floor' ? makeFloor({ sdk, transport }) : undefined;
const { Client, InMemoryTransport, StdioClientTransport } = mcpSdk(sdk);

const client = new Client(CLIENT_INFO);
let serverPid;
if (transport === 'memory') {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = echoServer(sdk, floor);
  await server.connect(serverSide);
  await client.connect(clientSide);
} else {
  const args = [...(process.env.MCP_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const stdio = new StdioClientTransport({
    command: process.execPath,
    args: [...args, join(HERE, 'server.mjs'), sdk, variant, ...(verify ? ['verify'] : [])],
    env: Object.fromEntries(['PATH', 'HOME', 'MCP_BENCH_NODE_DIR', 'MCP_BENCH_CANDIDATES'].filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]])),
    stderr: 'inherit',
  });
  await client.connect(stdio);
  serverPid = stdio.pid;
}

const call = floor ? () => floor.callTool(client, CALL) : () => client.callTool(CALL);

async function calls(n) {
  for (let i = 0; i < n; i++) {
    const result = await call();
    if (result?.content?.[0]?.text !== 'x') throw new Error(`unexpected answer: ${JSON.stringify(result)}`);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n); // the clock of V8's CPU profiles

/**
 * `n` calls: this process's CPU (µs), the stdio server's (µs) and the wall clock (µs), in total;
 * and when they ran (`from`, `to`: the monotonic clock, µs), to pick their samples from a profile.
 */
async function batch(n) {
  const server0 = serverPid ? processCpuNs(serverPid) : 0;
  const client0 = selfCpuUs();
  const from = monotonicUs();
  const wall0 = performance.now();
  await calls(n);
  const wall = (performance.now() - wall0) * 1000;
  // What the server does after its answer leaves (ending its span) is its call's cost too.
  if (serverPid) await sleep(5);
  const client = selfCpuUs() - client0;
  const server = serverPid ? (processCpuNs(serverPid) - server0) / 1000 : 0;
  return { client, server, wall, from, to: monotonicUs() };
}

/** Heap used after a full collection, every `every` calls up to `total` (needs --expose-gc). */
async function memory(total, every) {
  const samples = [];
  const sample = async (done) => {
    await otel.flush(); // spans the batch processor still holds are not the instrumentation's
    await sleep(0);
    for (let i = 0; i < 3; i++) globalThis.gc();
    samples.push({ calls: done, heapUsed: process.memoryUsage().heapUsed });
  };
  await sample(0);
  for (let done = 0; done < total; ) {
    await calls(every);
    done += every;
    await sample(done);
  }
  return samples;
}

/** The spans and points of a few calls, both sides' (verify mode). */
async function telemetryOf(n) {
  await calls(n);
  await sleep(20);
  if (transport === 'memory') {
    await otel.flush();
    return { spans: otel.spans(), points: await otel.points(), server: undefined };
  }
  await otel.flush();
  const spans = otel.spans();
  const points = await otel.points();
  // The server's, through its own tool (a bare call: its own spans are left out by the checker).
  const answer = await client.callTool({ name: '__telemetry', arguments: {} });
  return { spans, points, server: JSON.parse(answer.content[0].text) };
}

/** Whether the SDK's Protocol (client side) has mcp-otel's wrapper on its send funnel. */
function patched() {
  for (let proto = Client.prototype; proto; proto = Object.getPrototypeOf(proto)) {
    for (const name of ['_requestWithSchemaViaCodec', 'request']) {
      if (Object.prototype.hasOwnProperty.call(proto, name) && proto[name].__wrapped === true) return true;
    }
  }
  return false;
}

const handlers = {
  batch: ({ n }) => batch(n),
  memory: ({ total, every }) => memory(total, every),
  telemetry: ({ n }) => telemetryOf(n),
  info: () => ({ pid: process.pid, serverPid, patched: patched(), instrumented: instrumentation !== undefined }),
  exit: async () => {
    await client.close();
    setTimeout(() => process.exit(0), 50);
    return {};
  },
};

// `count N`: N calls, then exit (no IPC): a process whose instructions cachegrind counts.
if (mode === 'count') {
  await calls(Number(process.argv[6]));
  await client.close();
  process.exit(0);
}

process.on('message', async ({ id, command, ...args }) => {
  try {
    process.send({ id, ok: true, value: await handlers[command](args) });
  } catch (error) {
    process.send({ id, ok: false, error: String(error?.stack ?? error) });
  }
});
process.send({ ready: true });
