// The real flue 2.1.0 runtime, live, while turnscope writes beside it (no crash, no clock shift).
//
//   node live.mjs --db NEW_DB --side SIDE [--timeout-ms N]
//
// Starts the runtime on a new database (flue's built-in sqlite() adapter, composed as start()
// composes it: runtime.mjs) with the scripted model in resume mode, dispatches the `long-tool`
// script to worker/live1 (one tool call that runs for two minutes unless its signal aborts it),
// once that call has started dispatches a second message (`text`) to the same instance, which
// stays queued behind the first, and writes {"event":"live_ready","submissionId":…,"queuedId":…}
// to the side file: the caller then writes to the database while the runtime holds the lease. The
// runtime runs on until both are settled (polled every 250 ms), or --timeout-ms (default 90 s)
// passes.
//
// Prints {"submissionId", "queuedId", "settled": bool, "row", "queuedRow": the two rows at the
// end, "toolEnds": the side file's tool_end events, "modelCalls": its model_call events} and
// exits 0 (3 on a timeout, with the same JSON).
import { writeAll } from './write-all.mjs';
import { DatabaseSync } from 'node:sqlite';
import { createScriptedModel } from './model.mjs';
import { startRuntime } from './runtime.mjs';
import { SCRIPTS } from './scenarios.mjs';
import { appendEvent, configureSideFile } from './sidefile.mjs';
import { setToolStartHook } from './tools.mjs';

function arg(name) {
	const i = process.argv.indexOf(`--${name}`);
	return i < 0 ? undefined : process.argv[i + 1];
}
const dbPath = arg('db');
const side = arg('side');
const limit = Number(arg('timeout-ms') ?? 90_000);
if (!dbPath || !side) {
	process.stderr.write('usage: live.mjs --db NEW_DB --side SIDE [--timeout-ms N]\n');
	process.exit(2);
}
configureSideFile(side, 'live');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { providers } = createScriptedModel({ scripts: SCRIPTS, mode: 'resume' });
const rt = await startRuntime({ dbPath, providers, instrument: false });
let submissionId;
let started;
const running = new Promise((resolve) => {
	started = resolve;
});
setToolStartHook(() => started());
const receipt = await rt.dispatch('worker', 'live1', '[[script:long-tool#live]] scripted turnscope task "long-tool"');
submissionId = receipt.submissionId;
await running;
const queued = await rt.dispatch('worker', 'live1', '[[script:text#queued]] scripted turnscope task "text"');
const queuedId = queued.submissionId;
appendEvent({ event: 'live_ready', submissionId, queuedId });

const reader = new DatabaseSync(dbPath, { readOnly: true });
const rowOf = (id) => ({ ...reader.prepare('SELECT * FROM flue_agent_submissions WHERE submission_id = ?').get(id) });
const deadline = Date.now() + limit;
let row = rowOf(submissionId);
let queuedRow = rowOf(queuedId);
while ((row.status !== 'settled' || queuedRow.status !== 'settled') && Date.now() < deadline) {
	await sleep(250);
	row = rowOf(submissionId);
	queuedRow = rowOf(queuedId);
}
const settled = row.status === 'settled' && queuedRow.status === 'settled';
const { readFileSync } = await import('node:fs');
const toolEnds = readFileSync(side, 'utf8')
	.split('\n')
	.filter(Boolean)
	.map((l) => JSON.parse(l))
	.filter((e) => e.event === 'tool_end' || e.event === 'model_call');
const events = toolEnds;
writeAll(
	1,
	`${JSON.stringify({
		submissionId,
		queuedId,
		settled,
		row,
		queuedRow,
		toolEnds: events.filter((e) => e.event === 'tool_end'),
		modelCalls: events.filter((e) => e.event === 'model_call'),
	})}\n`,
);
process.exit(settled ? 0 : 3);
