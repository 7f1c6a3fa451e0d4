// A TypeScript-SDK agent (no Go) for the proxy's tests: it connects to the
// server argv names — a command it launches over the SDK's stdio transport,
// or an http(s) URL it reaches over the SDK's Streamable HTTP transport —
// lists tools, calls echo and prints one JSON line with what it saw.
// SDK_DIR is the installed @modelcontextprotocol/sdk package.
import { pathToFileURL } from "node:url";

const sdk = process.env.SDK_DIR;
const load = (path) => import(pathToFileURL(`${sdk}/dist/esm/${path}`));
const { Client } = await load("client/index.js");

const [target, ...args] = process.argv.slice(2);
let transport;
if (/^https?:\/\//.test(target)) {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(target));
} else {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({ command: target, args, env: process.env, stderr: "inherit" });
}
const client = new Client({ name: "node-agent", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const res = await client.callTool({ name: "echo", arguments: { message: "from node" } });
console.log(JSON.stringify({ tools: tools.map((t) => t.name), text: res.content[0].text }));
await client.close();
