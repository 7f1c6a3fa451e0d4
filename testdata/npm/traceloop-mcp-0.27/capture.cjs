// Records the spans @traceloop/instrumentation-mcp 0.27 emits for a real
// MCP client (@modelcontextprotocol/sdk 1.32) talking to a real server
// (server-everything over stdio), as the OTLP/HTTP JSON requests its
// exporter sends: one request per line on stdout.
//
//   NODE_PATH=<install>/node_modules node capture.cjs <server-everything dist/index.js>
//
// <install> is this directory's package-lock installed by
// scripts/install-npm-servers.sh (.cache/npm/traceloop-mcp-0.27). The
// processor's tests replay the output (processor/mcpimpactprocessor/testdata/
// traceloop-0.27.jsonl) and run this script live when npm is present.
//
// Two connections, as an agent that reconnects would make: the first lists
// the tools and calls echo twice and get-sum once, the second calls echo once.
"use strict";

const http = require("node:http");
const { trace } = require("@opentelemetry/api");
const { TracerProvider, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace");
const { defaultResource, resourceFromAttributes } = require("@opentelemetry/resources");
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-http");
const { McpInstrumentation } = require("@traceloop/instrumentation-mcp");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const server = process.argv[2];
  if (!server) throw new Error("usage: capture.cjs <server-everything dist/index.js>");

  // An OTLP/HTTP sink on loopback: what the exporter sends is the fixture.
  const requests = [];
  const sink = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      requests.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise((resolve) => sink.listen(0, "127.0.0.1", resolve));

  const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${sink.address().port}/v1/traces` });
  const provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ "service.name": "traceloop-agent" })),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  trace.setGlobalTracerProvider(provider);

  // 0.27 does not patch SDK 1.32 when it is required (the SDK's "." export
  // points to a CJS file the package does not ship, so the hook never
  // fires): instrument the Client class by hand.
  const instrumentation = new McpInstrumentation();
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument({ Client });

  const connect = async () => {
    const client = new Client({ name: "traceloop-agent", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [server, "stdio"], stderr: "ignore" }));
    return client;
  };
  const first = await connect();
  await first.listTools();
  await first.callTool({ name: "echo", arguments: { message: "one" } });
  await first.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
  await first.callTool({ name: "echo", arguments: { message: "two" } });
  await first.close();
  const second = await connect();
  await second.callTool({ name: "echo", arguments: { message: "three" } });
  await second.close();

  await provider.forceFlush();
  await provider.shutdown();
  sink.close();
  for (const r of requests) process.stdout.write(JSON.stringify(JSON.parse(r)) + "\n");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
