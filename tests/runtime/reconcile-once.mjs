// One pass of the real runtime's reconciler over a database, with the rows of every recovery
// state before and after.
//
//   node --import ./register-hooks.mjs reconcile-once.mjs --db DB          one pass, then dump
//   node reconcile-once.mjs --db DB --dump-only --ids ID,ID,…              dump only
//
// The pass is the Node coordinator's expired-lease pass (listExpiredSubmissions(), which also
// settles malformed rows as failed, then reconcileInterruptedSubmission() for each expired row
// with a new 30 s lease), called directly so that nothing runs afterwards: a replacement attempt
// is not processed and requeued rows are not claimed. Where the reconciler replaces the attempt,
// the rows are also dumped just before that write (`beforeReplacement`), because turnscope leaves
// the replacement to the runtime and compares with the rows up to it.
//
// Prints {"states":[{submissionId, before, after, beforeReplacement?, disposition, error?}]}.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { installFakeModel } from './fake-model.mjs';
import { startRuntime } from './runtime.mjs';

function arg(name) {
	const i = process.argv.indexOf(`--${name}`);
	return i < 0 ? undefined : process.argv[i + 1];
}

/** Every row a reconciliation of `id` can touch, in a stable order. */
function dumpState(db, id) {
	const sub = db.prepare('SELECT * FROM flue_agent_submissions WHERE submission_id = ?').get(id);
	if (!sub) return null;
	// A malformed payload has no stream path; such a row has no events either.
	let path = null;
	try {
		const payload = JSON.parse(sub.payload);
		path = `agents/${payload.agent}/${payload.id}`;
	} catch {}
	return {
		submission: { ...sub },
		journal: db.prepare('SELECT * FROM flue_agent_turn_journals WHERE submission_id = ?').get(id) ?? null,
		streamChunks: db
			.prepare("SELECT * FROM flue_agent_stream_chunks WHERE substr(stream_key, 1, length(?) + 1) = ? || ':' ORDER BY stream_key, segment_index")
			.all(id, id),
		session: db.prepare('SELECT * FROM flue_sessions WHERE id = ?').get(sub.session_key) ?? null,
		entries: db.prepare('SELECT * FROM flue_session_entries WHERE session_id = ? ORDER BY position').all(sub.session_key),
		eventStream: db.prepare('SELECT * FROM flue_event_streams WHERE path = ?').get(path) ?? null,
		events: db.prepare('SELECT * FROM flue_event_stream_keys WHERE path = ? ORDER BY seq').all(path),
		eventEntries: db.prepare('SELECT * FROM flue_event_stream_entries WHERE path = ? ORDER BY seq').all(path),
	};
}

function plain(v) {
	return JSON.parse(JSON.stringify(v));
}

const INTERNALS = ['reconcileInterruptedSubmission', 'submissionSyntheticRequest', 'LEASE_DURATION_MS', 'agentStreamPath', 'isStreamExcludedEvent'];

/** The runtime's internal functions, exported by expose-hooks.mjs as `__turnscope_<name>`. */
async function internals() {
	const dist = dirname(dirname(fileURLToPath(import.meta.resolve('@flue/runtime/node'))));
	const found = {};
	for (const f of readdirSync(dist).filter((f) => f.endsWith('.mjs'))) {
		const source = readFileSync(join(dist, f), 'utf8');
		if (!INTERNALS.some((n) => source.includes(`function ${n}(`) || source.includes(`const ${n} =`))) continue;
		const mod = await import(pathToFileURL(join(dist, f)).href);
		for (const [k, v] of Object.entries(mod)) if (k.startsWith('__turnscope_')) found[k.slice('__turnscope_'.length)] = v;
	}
	const missing = INTERNALS.filter((n) => found[n] === undefined);
	if (missing.length) throw new Error(`runtime internals not exposed (${missing.join(', ')}): run with --import ./register-hooks.mjs`);
	return found;
}

const dbPath = arg('db');
if (!dbPath) throw new Error('usage: reconcile-once.mjs --db DB [--dump-only --ids ID,…]');
const reader = new DatabaseSync(dbPath, { readOnly: true });

if (process.argv.includes('--dump-only')) {
	const ids = (arg('ids') ?? '').split(',').filter(Boolean);
	printAndExit(`${JSON.stringify({ states: ids.map((id) => ({ submissionId: id, after: plain(dumpState(reader, id)) })) })}\n`);
	// printAndExit's write callback ends the process; nothing below runs.
	await new Promise(() => {});
}

const x = await internals();
const now = Date.now();
const expiredIds = reader
	.prepare("SELECT submission_id FROM flue_agent_submissions WHERE status = 'running' AND lease_expires_at > 0 AND lease_expires_at < ? ORDER BY sequence")
	.all(now)
	.map((r) => r.submission_id);
const states = new Map(expiredIds.map((id) => [id, { submissionId: id, before: plain(dumpState(reader, id)) }]));

const agentNames = reader
	.prepare('SELECT DISTINCT payload FROM flue_agent_submissions')
	.all()
	.map((r) => {
		try {
			return JSON.parse(r.payload).agent;
		} catch {
			return undefined;
		}
	})
	.filter((n) => typeof n === 'string');
const errors = [];
const consoleError = console.error;
console.error = (...a) => {
	errors.push(a.map((v) => (v instanceof Error ? `${v.name}: ${v.message}` : typeof v === 'string' ? v : JSON.stringify(v))).join(' '));
};
installFakeModel();
const rt = await startRuntime({ dbPath, extraAgentNames: agentNames });
const ownerId = crypto.randomUUID();
let replacing = null;
// The store the reconciler writes through, with one observation added: the rows just before an
// attempt replacement. Every call goes to the runtime's own store unchanged.
const submissions = new Proxy(rt.submissions, {
	get(target, prop) {
		const value = Reflect.get(target, prop, target);
		if (typeof value !== 'function') return value;
		if (prop !== 'replaceTurnJournalAttempt') return value.bind(target);
		return async (...args) => {
			const snapshot = plain(dumpState(reader, replacing));
			const result = await value.apply(target, args);
			if (result && states.has(replacing)) states.get(replacing).beforeReplacement = snapshot;
			return result;
		};
	},
});
const makeContext = (input) => (dispatchId) => {
	const ctx = rt.createContext({ id: input.id, agentName: input.agent, request: x.submissionSyntheticRequest(input), dispatchId });
	const streamPath = x.agentStreamPath(input.agent, input.id);
	ctx.subscribeEvent(async (event) => {
		if (x.isStreamExcludedEvent(event) || event.type === 'submission_settled') return;
		await rt.eventStreamStore.appendEvent(streamPath, event);
	});
	return ctx;
};
for (const submission of await submissions.listExpiredSubmissions()) {
	const agent = rt.agents.find((a) => a.name === submission.input.agent)?.definition;
	const state = states.get(submission.submissionId);
	if (!agent || !state) continue;
	replacing = submission.submissionId;
	const streamPath = x.agentStreamPath(submission.input.agent, submission.input.id);
	await rt.eventStreamStore.createStream(streamPath).catch(() => {});
	try {
		const r = await x.reconcileInterruptedSubmission(
			submissions,
			submission,
			agent,
			makeContext(submission.input),
			(terminal) => rt.eventStreamStore.appendEventOnce(streamPath, terminal.eventKey, terminal.event),
			{ ownerId, leaseExpiresAt: Date.now() + x.LEASE_DURATION_MS },
		);
		state.disposition = r.disposition;
	} catch (e) {
		state.disposition = 'threw';
		state.error = `${e?.name}: ${e?.message}`;
	}
}
for (const state of states.values()) {
	state.disposition ??= 'not listed (settled as malformed, or its agent is unknown)';
	state.after = plain(dumpState(reader, state.submissionId));
}
await rt.coordinator.shutdown(1_000);
rt.adapter.close?.();
console.error = consoleError;
printAndExit(`${JSON.stringify({ states: [...states.values()], runtimeErrorsLogged: errors })}\n`);

/** Print `text` and exit once it is written: process.exit() would cut a write to a pipe short. */
function printAndExit(text) {
	process.stdout.write(text, () => process.exit(0));
}
