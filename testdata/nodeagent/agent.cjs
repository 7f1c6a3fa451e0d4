// A small MCP agent on the official TypeScript SDK (@modelcontextprotocol/sdk
// 1.32), with no OpenTelemetry of its own: it starts a server over stdio
// (the server itself, or `mcpdrift proxy -- server`), lists its tools and
// calls one, and prints what happened as JSON lines on stdout. The tests
// use it as "an agent in another language" in front of the proxy.
//
//   NODE_PATH=<sdk install>/node_modules node agent.cjs [options] -- COMMAND [ARGS...]
//
// <sdk install> is .cache/npm/traceloop-mcp-0.27, which pins the SDK
// (testdata/npm/traceloop-mcp-0.27; testservers.NodeAgent finds it).
//
// Options:
//   --name NAME          clientInfo name (default mcpdrift-node-agent)
//   --capabilities JSON  client capabilities (default {})
//   --list               list the tools (the default without --call)
//   --call TOOL          call TOOL, after listing when --list is given too
//   --arguments JSON     the call's arguments (default {})
//   --times N            how many times to call it (default 1)
//   --timeout MS         each request's timeout (default 60000)
//   --stdin              then read one command a line from standard input,
//                        until it closes: {"op":"list"} or
//                        {"op":"call","tool":T,"arguments":{...}}; a live
//                        session a test drives step by step (across a server
//                        upgrade, say)
//
// Output, one JSON object a line:
//   {"event":"connected","serverInfo":{...},"capabilities":{...}}
//   {"event":"tools","tools":[...every definition as listed...]}
//   {"event":"call","tool":T,"n":1,"result":{...}}      (isError results too)
//   {"event":"call","tool":T,"n":1,"error":{"code":C,"message":M}}
//   {"event":"notification","method":M,"params":{...}}
//   {"event":"closed"}
// Exit status: 0 when every step got an answer (tool errors and JSON-RPC
// errors are answers), 1 when the connection failed, 2 on usage errors.
//
// The server gets this process's whole environment (the SDK passes only
// HOME, PATH and a few others unless told), so OTEL_* variables reach a
// proxy in between.
"use strict";

const readline = require("node:readline");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

function usage(message) {
  process.stderr.write(`agent.cjs: ${message}\nusage: agent.cjs [--name N] [--capabilities JSON] [--list] [--call TOOL [--arguments JSON] [--times N]] [--timeout MS] [--stdin] -- COMMAND [ARGS...]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { name: "mcpdrift-node-agent", capabilities: {}, list: false, call: "", arguments: {}, times: 1, timeout: 60000, stdin: false, command: [] };
  const json = (flag, v) => {
    try {
      const parsed = JSON.parse(v);
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      return parsed;
    } catch (e) {
      return usage(`${flag} wants a JSON object: ${e.message}`);
    }
  };
  const count = (flag, v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) usage(`${flag} wants a whole number, got ${JSON.stringify(v)}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      o.command = argv.slice(i + 1);
      break;
    }
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    switch (a) {
      case "--name": o.name = value(); break;
      case "--capabilities": o.capabilities = json(a, value()); break;
      case "--list": o.list = true; break;
      case "--call": o.call = value(); break;
      case "--arguments": o.arguments = json(a, value()); break;
      case "--times": o.times = count(a, value()); break;
      case "--timeout": o.timeout = count(a, value()); break;
      case "--stdin": o.stdin = true; break;
      default: usage(`unknown option ${a}`);
    }
  }
  if (o.command.length === 0) usage("no server command after --");
  if (!o.call) o.list = true;
  return o;
}

const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

async function listTools(client, timeout) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  emit({ event: "tools", tools });
}

const calls = new Map();

async function callTool(client, tool, args, timeout) {
  const n = (calls.get(tool) || 0) + 1;
  calls.set(tool, n);
  try {
    const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout });
    emit({ event: "call", tool, n, result });
  } catch (e) {
    if (typeof e.code !== "number") throw e; // not an answer: the connection broke
    emit({ event: "call", tool, n, error: { code: e.code, message: e.message } });
  }
}

async function fromStdin(client, timeout) {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let cmd;
    try {
      cmd = JSON.parse(line);
    } catch (e) {
      emit({ event: "bad_command", line, message: e.message });
      continue;
    }
    if (cmd.op === "list") await listTools(client, timeout);
    else if (cmd.op === "call" && typeof cmd.tool === "string") await callTool(client, cmd.tool, cmd.arguments || {}, timeout);
    else emit({ event: "bad_command", line, message: 'want {"op":"list"} or {"op":"call","tool":T,"arguments":{...}}' });
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const client = new Client({ name: o.name, version: "1.0.0" }, { capabilities: o.capabilities });
  client.fallbackNotificationHandler = async (n) => emit({ event: "notification", method: n.method, params: n.params });
  const transport = new StdioClientTransport({ command: o.command[0], args: o.command.slice(1), env: process.env, stderr: "inherit" });
  await client.connect(transport, { timeout: o.timeout });
  emit({ event: "connected", serverInfo: client.getServerVersion(), capabilities: client.getServerCapabilities() });
  try {
    if (o.list) await listTools(client, o.timeout);
    for (let i = 0; o.call && i < o.times; i++) await callTool(client, o.call, o.arguments, o.timeout);
    if (o.stdin) await fromStdin(client, o.timeout);
  } finally {
    await client.close();
    emit({ event: "closed" });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`agent.cjs: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
