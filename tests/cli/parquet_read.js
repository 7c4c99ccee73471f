// Helper of t1300-tp-parquet.sh: prints Parquet files read by DuckDB in the
// JSON of `trace_processor_shell query --format json` (one array of row
// objects per file, integers exact, doubles as JavaScript prints them), so
// the two compare as text.
//   node parquet_read.js TOOLS_DIR MODE FILE...
// MODE "rows": every column but the leading trace_id (or __trace_id);
// MODE "sql": argv[4] is SQL over the files (a glob in it is DuckDB's).
'use strict';
const { createRequire } = require('module');
const req = createRequire(process.argv[2] + '/');
const { DuckDBInstance } = req('@duckdb/node-api');

function value(v) {
	if (v === null || v === undefined) return 'null';
	if (typeof v === 'bigint') return v.toString();
	if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
	if (typeof v === 'string') return JSON.stringify(v);
	return JSON.stringify(String(v));
}

async function print(con, sql) {
	const r = await con.runAndReadAll(sql);
	const names = r.columnNames();
	const rows = r.getRows();
	let out = '[';
	rows.forEach((row, i) => {
		out += (i ? ',\n{' : '\n{') +
			names.map((n, j) => JSON.stringify(n) + ':' + value(row[j])).join(',') + '}';
	});
	out += rows.length ? '\n]\n' : ']\n';
	process.stdout.write(out);
}

(async () => {
	const inst = await DuckDBInstance.create(':memory:');
	const con = await inst.connect();
	const mode = process.argv[3];
	if (mode === 'sql') {
		await print(con, process.argv[4]);
		return;
	}
	for (const f of process.argv.slice(4)) {
		const q = f.replace(/'/g, "''");
		const cols = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${q}')`))
			.getRows().map((r) => r[0]);
		const keep = cols.slice(1).map((c) => '"' + c.replace(/"/g, '""') + '"');
		await print(con, keep.length ?
			`SELECT ${keep.join(', ')} FROM read_parquet('${q}')` :
			`SELECT * FROM read_parquet('${q}') LIMIT 0`);
	}
})().catch((e) => {
	process.stderr.write(String(e && e.message || e) + '\n');
	process.exit(1);
});
