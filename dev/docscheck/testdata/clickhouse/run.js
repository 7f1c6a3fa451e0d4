// Runs a plan of ClickHouse statements on chdb's in-process engine and prints
// each query's rows as JSON. Usage: node run.js <binding dir> <plan.json>
// plan: {"data": dir, "setup": [sql...], "queries": [{"name", "sql", "params": {k: v}}]}
// The binding's CreateConnection / QueryWithConnection / CloseConnection are
// what the chdb package's Session wraps (pinned: @chdb/lib-linux-x64-gnu
// 26.7.3-stable.1); the wrapper itself cannot be installed with `npm ci`.
'use strict';
const fs = require('fs');
const binding = require(process.argv[2]);
const plan = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const conn = binding.CreateConnection(plan.data);
const out = {};
try {
  for (const sql of plan.setup) binding.QueryWithConnection(conn, sql, 'CSV');
  for (const q of plan.queries) {
    for (const [k, v] of Object.entries(q.params || {})) {
      binding.QueryWithConnection(conn, `SET param_${k} = '${v.replace(/['\\]/g, '\\$&')}'`, 'CSV');
    }
    const text = binding.QueryWithConnection(conn, q.sql, 'JSONEachRow');
    out[q.name] = text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  }
} finally {
  binding.CloseConnection(conn);
}
process.stdout.write(JSON.stringify(out));
