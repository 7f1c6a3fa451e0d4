// A TypeScript-SDK agent (no Go) for the proxy's tests: it launches the
// command in argv through the SDK's stdio transport, lists tools, calls echo
// and prints one JSON line with what it saw. SDK_DIR is the installed
// @modelcontextprotocol/sdk package.
import { pathToFileURL } from "node:url";

const sdk = process.env.SDK_DIR;
const { Client } = await import(pathToFileURL(`${sdk}/dist/esm/client/index.js`));
const { StdioClientTransport } = await import(pathToFileURL(`${sdk}/dist/esm/client/stdio.js`));

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "node-agent", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const res = await client.callTool({ name: "echo", arguments: { message: "from node" } });
console.log(JSON.stringify({ tools: tools.map((t) => t.name), text: res.content[0].text }));
await client.close();
