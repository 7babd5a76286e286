// One reconciliation pass of the real flue 2.1.0 runtime over a database (a copy: it is written),
// at a chosen clock, with what the pass wrote for each submission.
//
//   node reconcile-once.mjs --db COPY --now MS [--until-idle]
//
// The runtime is composed as start() composes it (runtime.mjs) with the scripted model in resume
// mode (no crash directives) and its wall clock shifted so that `Date.now()` starts at MS (a
// constant offset, as the harness's `--clock lease` does; timers are unaffected). Composing it
// runs the Node coordinator's startup reconciliation, which is awaited here: the unready pass,
// the pending-settlement pass (terminalizing rows whose lease ended), then
// `reconcileInterruptedSubmission` for every running row whose lease ended
// (`listExpiredSubmissions`). A replaced attempt starts processing meanwhile; its own writes are
// not the reconciler's, so for each submission only what happened up to its reconciler's decisive
// row write is kept: the first of `replaceSubmissionAttempt`, `requeueSubmission`,
// `finalizeSubmissionSettlement`, `completeSubmission` or `failSubmission` for it, the row read
// right after that call returned (before the runtime ran on), and the records appended for it
// before (record id, type, and a signal's content). Nothing is changed: the stores are observed
// through the Proxies of runtime.mjs, which never change arguments or results.
//
// Records appended for no submission go to the submission whose row write comes next (the pass
// is sequential).
//
// Prints {"now", "states": [{submissionId, before, calls, decisive: {method, row} | null,
// appended: [{id, type, content?}]}], "unattributed"} and exits at once (the replacement's
// processing is not waited for).
import { writeAll } from './write-all.mjs';
import { DatabaseSync } from 'node:sqlite';
import { createScriptedModel } from './model.mjs';
import { startRuntime } from './runtime.mjs';
import { SCRIPTS } from './scenarios.mjs';

function arg(name) {
	const i = process.argv.indexOf(`--${name}`);
	return i < 0 ? undefined : process.argv[i + 1];
}

const dbPath = arg('db');
const now = Number(arg('now'));
if (!dbPath || !Number.isFinite(now)) throw new Error('usage: reconcile-once.mjs --db COPY --now MS');

// The runtime's clock, shifted by a constant so that it starts at --now.
const RealDate = globalThis.Date;
const offset = now - RealDate.now();
class ShiftedDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(RealDate.now() + offset);
		else super(...args);
	}
	static now() {
		return RealDate.now() + offset;
	}
}
globalThis.Date = ShiftedDate;

const reader = new DatabaseSync(dbPath);
const rowOf = (id) => {
	const r = reader.prepare('SELECT * FROM flue_agent_submissions WHERE submission_id = ?').get(id);
	return r ? { ...r } : null;
};
const states = new Map();
for (const r of reader.prepare('SELECT * FROM flue_agent_submissions ORDER BY sequence').all()) {
	states.set(r.submission_id, { submissionId: r.submission_id, before: { ...r }, calls: [], decisive: null, appended: [] });
}

const DECISIVE = new Set(['replaceSubmissionAttempt', 'requeueSubmission', 'finalizeSubmissionSettlement', 'completeSubmission', 'failSubmission']);
const WRITES = new Set([...DECISIVE, 'reserveSubmissionSettlement', 'markSubmissionInputApplied', 'claimSubmission', 'settleQueuedSubmission']);
let passDone = false;
// Records appended for no submission (the terminal paths' markers and signal are written by a
// session opened outside any attempt): the pass is sequential, so they belong to the submission
// whose row write comes next.
let unowned = [];

function observe(store, method, args, result) {
	if (untilIdle) observeResume(store, method, args);
	if (passDone) return;
	if (store === 'submissions' && WRITES.has(method)) {
		const id = args[0]?.submissionId ?? (typeof args[0] === 'string' ? args[0] : undefined);
		const s = states.get(id);
		if (!s || s.decisive) return;
		s.appended.push(...unowned);
		unowned = [];
		s.calls.push({ method, returned: result !== null && result !== false && result !== undefined });
		if (DECISIVE.has(method)) s.decisive = { method, row: rowOf(id) };
		return;
	}
	if (store === 'stream' && method === 'append') {
		const input = args[0] ?? {};
		for (const record of input.records ?? []) {
			const id = record.submissionId ?? input.submission?.submissionId;
			const brief = { id: record.id, type: record.type, ...(record.type === 'signal' ? { signalType: record.signalType, content: record.content } : {}) };
			if (id === undefined) {
				unowned.push(brief);
				continue;
			}
			const s = states.get(id);
			if (!s || s.decisive) continue;
			s.appended.push(brief);
		}
	}
}

// --until-idle: then let the runtime work until its coordinator is idle (every replaced attempt
// resumed, every requeued row claimed and run), and add per submission `resumed` (the records
// appended for it after its reconciler's write: id, type) and `final` (its row then).
const untilIdle = process.argv.includes('--until-idle');
for (const s of states.values()) if (untilIdle) s.resumed = [];
function observeResume(store, method, args) {
	if (store !== 'stream' || method !== 'append') return;
	const input = args[0] ?? {};
	for (const record of input.records ?? []) {
		const s = states.get(record.submissionId ?? input.submission?.submissionId);
		if (s?.decisive) s.resumed.push({ id: record.id, type: record.type });
	}
}

const { providers } = createScriptedModel({ scripts: SCRIPTS, mode: 'resume' });
const startedAt = Date.now();
const rt = await startRuntime({ dbPath, providers, observe });
passDone = true;
if (untilIdle) {
	await rt.waitForIdle();
	for (const s of states.values()) s.final = rowOf(s.submissionId);
}
writeAll(1, `${JSON.stringify({ now: startedAt, states: [...states.values()], unattributed: unowned })}\n`);
process.exit(0);
