// Hand a database back to the real runtime and report what it did.
//
//   node resume.mjs --db DB --side SIDE
//
// Waits until the lease of every running or terminalizing row has expired (the runtime's lease is
// a fixed 30 s), lets the runtime's own startup recovery (reconcileSubmissions()) handle every
// expired submission and drain the queue, and prints one JSON report on stdout: per submission
// the status before and after, the outcome, the error, the attempt counts, and per tool call id
// how many times the tool ran over every run recorded in SIDE (the crash run and this one).
// DB and SIDE are changed in place: run it on copies.
import { existsSync, readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { installFakeModel } from './fake-model.mjs';
import { startRuntime } from './runtime.mjs';
import { appendEvent, configureSideFile } from './sidefile.mjs';

function arg(name) {
	const i = process.argv.indexOf(`--${name}`);
	if (i < 0 || i + 1 >= process.argv.length) throw new Error(`usage: resume.mjs --db DB --side SIDE (missing --${name})`);
	return process.argv[i + 1];
}

function readRows(dbPath) {
	const db = new DatabaseSync(dbPath, { readOnly: true });
	try {
		return db
			.prepare(
				`SELECT submission_id, session_key, kind, status, attempt_count, max_retry, lease_expires_at, error,
				        terminal_event_json FROM flue_agent_submissions ORDER BY sequence`,
			)
			.all();
	} finally {
		db.close();
	}
}

function sideLines(path) {
	if (!existsSync(path)) return [];
	return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

function outcome(row) {
	if (row.status !== 'settled') return 'unsettled';
	if (row.error) return 'failed';
	// A direct prompt settles with error NULL; its outcome is in its terminal event.
	if (row.kind === 'direct' && row.terminal_event_json) {
		try {
			return JSON.parse(row.terminal_event_json).outcome === 'failed' ? 'failed' : 'completed';
		} catch {
			return 'failed';
		}
	}
	return 'completed';
}

const dbPath = arg('db');
const sidePath = arg('side');
const before = readRows(dbPath);
const maxLease = Math.max(0, ...before.filter((r) => r.status === 'running' || r.status === 'terminalizing').map((r) => Number(r.lease_expires_at)));
const waitMs = Math.max(0, maxLease - Date.now() + 250);
if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));

configureSideFile(sidePath, `resume:${new Date().toISOString()}`);
installFakeModel();
appendEvent({ event: 'resume_start' });
const errors = [];
const consoleError = console.error;
console.error = (...a) => {
	errors.push(a.map((x) => (x instanceof Error ? `${x.name}: ${x.message}` : typeof x === 'string' ? x : JSON.stringify(x))).join(' '));
	consoleError(...a);
};
const rt = await startRuntime({ dbPath });
const t0 = Date.now();
await rt.coordinator.reconcileSubmissions();
await rt.coordinator.waitForIdle();
const tookMs = Date.now() - t0;
await rt.coordinator.shutdown(5_000);
rt.adapter.close?.();
console.error = consoleError;
appendEvent({ event: 'resume_end' });

const after = readRows(dbPath);
const beforeById = new Map(before.map((r) => [r.submission_id, r]));
const lines = sideLines(sidePath);
const tagOf = new Map(lines.filter((l) => l.event === 'admitted').map((l) => [l.submissionId, l.tag]));
const executions = {};
for (const l of lines) {
	if (l.event !== 'tool_start') continue;
	const c = (executions[l.toolCallId] ??= { tool: l.tool, executions: 0, byRun: {} });
	c.executions += 1;
	const run = l.run.startsWith('resume') ? 'resume' : 'crash';
	c.byRun[run] = (c.byRun[run] ?? 0) + 1;
}
const report = {
	db: dbPath,
	waitedForLeasesMs: waitMs,
	reconcileAndDrainMs: tookMs,
	submissions: after.map((r) => {
		const b = beforeById.get(r.submission_id);
		const tag = tagOf.get(r.submission_id) ?? null;
		const calls = Object.fromEntries(Object.entries(executions).filter(([id]) => tag && id.startsWith(`tc_${tag}_`)));
		return {
			submissionId: r.submission_id,
			kind: r.kind,
			scriptTag: tag,
			statusBefore: b?.status ?? null,
			statusAfter: r.status,
			outcome: outcome(r),
			error: r.error ?? null,
			attemptCountBefore: b?.attempt_count ?? null,
			attemptCountAfter: r.attempt_count,
			toolExecutions: calls,
			doubleExecuted: Object.entries(calls).filter(([, c]) => c.executions > 1).map(([id]) => id),
		};
	}),
	runtimeErrorsLogged: errors,
};
printAndExit(`${JSON.stringify(report, null, 2)}\n`);

/** Print `text` and exit once it is written: process.exit() would cut a write to a pipe short. */
function printAndExit(text) {
	process.stdout.write(text, () => process.exit(0));
}
