// The runtime's own classification of every submission of a flue 2.1.0 database, as JSON.
//
//   node --import ./register-hooks.mjs classify.mjs DB [--context-window N] [--check-scenario NAME]
//
// Needs the load hook (register-hooks.mjs → expose-hooks.mjs): the classifier, the reader and the
// reducer are not exported by @flue/runtime; the hook appends an export line to the two dist
// chunks that define them, and nothing else is changed. The database (with any -wal/-shm) is
// copied to a temporary directory and only the copy is opened.
//
// Per submission (in `sequence` order): the row's time-independent fields, then
//  - classification: flue's classifyConversationSubmission(conversation, inputEntryId,
//    { contextWindow }), the call its reconciler (inspectSubmissionInput) and its resume make,
//    over the conversation folded by flue's own loadReducedConversationState (fold checkpoints,
//    batches, spilled chunks: its code); classifySubmissionState(undefined) where the
//    conversation does not exist. The input entry id is flue's submissionEntryId(kind, id).
//  - trailingPartialToolBatch: flue's findTrailingPartialToolBatch over the message entries
//    after the input (what its repair passes it): tool call ids, or null.
//  - uncommittedToolOutcomes: the tool call ids of the recorded but uncommitted tool_outcome
//    records of the submission's conversation (flue's reducer's toolOutcomes), sorted;
//  - ghost: the in-progress messages of that conversation, whether each hangs at the leaf.
// Nothing here depends on the clock (no lease expiry): the same database prints the same JSON.
// --check-scenario NAME: also compare with what scenario NAME of scenarios.mjs aims for (by the
// script tag in each input) and exit 1 on a miss, printing the misses on stderr.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sqlite } from '@flue/runtime/node';
import { CONTEXT_WINDOW } from './model.mjs';

const PREFIX = '__turnscope_';

export async function loadFlueInternals() {
	const distDir = dirname(dirname(fileURLToPath(import.meta.resolve('@flue/runtime/node'))));
	const files = readdirSync(distDir).filter((f) => f.endsWith('.mjs'));
	const find = (needle) => files.find((f) => readFileSync(join(distDir, f), 'utf8').includes(needle));
	const classifierChunk = find('function classifySubmissionState(');
	const entryIdChunk = find('function submissionEntryId(');
	if (!classifierChunk || !entryIdChunk) throw new Error('no dist chunk defines classifySubmissionState / submissionEntryId');
	const a = await import(pathToFileURL(join(distDir, classifierChunk)).href);
	const b = await import(pathToFileURL(join(distDir, entryIdChunk)).href);
	if (typeof a[`${PREFIX}classifySubmissionState`] !== 'function' || typeof b[`${PREFIX}submissionEntryId`] !== 'function') {
		throw new Error('flue internals not exposed: run with --import ./register-hooks.mjs');
	}
	const pick = (mod) => Object.fromEntries(Object.entries(mod).filter(([k]) => k.startsWith(PREFIX)).map(([k, v]) => [k.slice(PREFIX.length), v]));
	return { chunks: [classifierChunk, entryIdChunk], ...pick(a), ...pick(b) };
}

export function describeClassification(state) {
	const c = { kind: state.kind };
	if (state.mode) c.mode = state.mode;
	if (state.consecutiveRetryableErrors !== undefined) c.consecutiveRetryableErrors = state.consecutiveRetryableErrors;
	if (state.kind === 'completed') {
		c.overflow = state.overflow;
		if (state.terminalToolBatch) c.terminalToolBatch = true;
	}
	if (state.kind === 'terminal_error') c.reason = state.reason;
	if (state.assistant) c.assistantStopReason = state.assistant.stopReason;
	return c;
}

const scriptOf = (payload) => {
	try {
		const body = JSON.parse(payload)?.message?.body ?? '';
		const m = /\[\[script:([A-Za-z0-9_-]+)#([A-Za-z0-9_-]+)\]\]/.exec(body);
		return m ? { script: m[1], tag: m[2] } : {};
	} catch {
		return {};
	}
};

/** A copy of dbPath (with its -wal/-shm) in a temporary directory; `done()` removes it. */
export function scratchCopy(dbPath) {
	const tmp = mkdtempSync(join(tmpdir(), 'turnscope-flue2-'));
	const copy = join(tmp, basename(dbPath));
	copyFileSync(dbPath, copy);
	for (const suffix of ['-wal', '-shm']) if (existsSync(dbPath + suffix)) copyFileSync(dbPath + suffix, copy + suffix);
	return { path: copy, done: () => rmSync(tmp, { recursive: true, force: true }) };
}

export async function classifyDatabase(dbPath, { contextWindow = CONTEXT_WINDOW } = {}) {
	const flue = await loadFlueInternals();
	const scratch = scratchCopy(dbPath);
	const adapter = sqlite(scratch.path);
	try {
		const raw = new DatabaseSync(scratch.path, { readOnly: true });
		const meta = Object.fromEntries(raw.prepare('SELECT key, value FROM flue_meta').all().map((r) => [r.key, r.value]));
		const rows = raw
			.prepare(
				`SELECT sequence, submission_id, session_key, kind, status, attempt_count, max_attempts, input_applied_at,
				        abort_requested_at, joined_into, settlement_record, error, payload
				   FROM flue_agent_submissions ORDER BY sequence`,
			)
			.all();
		raw.close();
		// flue's own store and reader over its built-in adapter (no migrate: read only).
		const { conversationStreamStore } = await adapter.connect();
		const folds = new Map();
		const fold = async (path) => {
			if (!folds.has(path)) {
				try {
					folds.set(path, { state: await flue.loadReducedConversationState({ store: conversationStreamStore, path }) });
				} catch (error) {
					folds.set(path, { error: `${error?.name ?? 'Error'}: ${error?.message ?? error}` });
				}
			}
			return folds.get(path);
		};
		const submissions = [];
		for (const row of rows) {
			const key = flue.parseSessionStorageKey(row.session_key);
			const path = key ? flue.agentStreamPath(key.agentName, key.instanceId) : null;
			const folded = path ? await fold(path) : { error: 'unparseable session_key' };
			const state = folded.state;
			const conversationId = state?.conversationScopes.get(flue.conversationScopeKey(key.harness, key.session));
			const conversation = conversationId ? state.conversations.get(conversationId) : undefined;
			const inputEntryId = flue.submissionEntryId(row.kind, row.submission_id);
			let classification;
			let partial = null;
			if (folded.error) classification = { error: folded.error };
			else {
				const result = conversation
					? flue.classifyConversationSubmission(conversation, inputEntryId, { contextWindow })
					: flue.classifySubmissionState(undefined, { contextWindow });
				classification = describeClassification(result);
				const after = conversation ? flue.getActiveConversationPathSince(conversation, inputEntryId) : undefined;
				if (after) {
					const batch = flue.findTrailingPartialToolBatch(after.filter((e) => e.type === 'message'));
					partial = batch ? batch.toolCalls.map((c) => c.id) : null;
				}
			}
			const { script, tag } = scriptOf(row.payload);
			submissions.push({
				sequence: Number(row.sequence),
				submissionId: row.submission_id,
				kind: row.kind,
				streamPath: path,
				script: script ?? null,
				scriptTag: tag ?? null,
				status: row.status,
				attemptCount: Number(row.attempt_count),
				maxAttempts: Number(row.max_attempts),
				inputApplied: row.input_applied_at !== null,
				abortRequested: row.abort_requested_at !== null,
				joined: row.joined_into !== null,
				settlementOutcome: row.settlement_record ? (JSON.parse(row.settlement_record).outcome ?? null) : null,
				error: row.error,
				inputEntryId,
				inputEntryFound: Boolean(conversation?.entries.has(inputEntryId)),
				classification,
				trailingPartialToolBatch: partial,
				uncommittedToolOutcomes: conversation
					? [...conversation.toolOutcomes.values()].map((id) => state.recordsById.get(id)?.toolCallId ?? null).sort()
					: [],
				ghost: conversation
					? [...conversation.inProgressMessages.values()].map((m) => ({ atLeaf: m.parentId === conversation.activeLeafId }))
					: [],
			});
		}
		return { runtime: '@flue/runtime 2.1.0', contextWindow, meta, submissions };
	} finally {
		try {
			adapter.close();
		} catch {}
		scratch.done();
	}
}

const classText = (c) => (c.mode ? `${c.kind}/${c.mode}` : c.kind);

/** What scenario NAME aims for (its `expect`, by script tag prefix) against the report. */
export function checkScenario(scenario, report) {
	const misses = [];
	for (const [prefix, want] of Object.entries(scenario.expect ?? {})) {
		const sub = report.submissions.find((s) => s.scriptTag?.startsWith(prefix));
		if (!sub) {
			misses.push(`${prefix}: no submission`);
			continue;
		}
		const miss = (m) => misses.push(`${sub.scriptTag}: ${m}`);
		if (want.status && sub.status !== want.status) miss(`status ${sub.status}, expected ${want.status}`);
		if (want.classification && classText(sub.classification) !== want.classification)
			miss(`classification ${classText(sub.classification)}, expected ${want.classification}`);
		if (want.partial !== undefined && (sub.trailingPartialToolBatch?.length ?? 0) !== want.partial)
			miss(`trailing partial batch ${JSON.stringify(sub.trailingPartialToolBatch)}, expected ${want.partial} call(s)`);
		if (want.uncommittedOutcomes !== undefined && sub.uncommittedToolOutcomes.length !== want.uncommittedOutcomes)
			miss(`${sub.uncommittedToolOutcomes.length} uncommitted tool outcome(s), expected ${want.uncommittedOutcomes}`);
		if (want.ghost && !sub.ghost.some((g) => g.atLeaf)) miss('no in-progress (ghost) message at the leaf');
		if (want.terminalToolBatch && !sub.classification?.terminalToolBatch) miss('classification lacks terminalToolBatch');
		if (want.abortRequested && !sub.abortRequested) miss('no abort_requested_at');
	}
	return misses;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const args = process.argv.slice(2);
	const value = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
	const db = args.find((a, i) => !a.startsWith('--') && !['--context-window', '--check-scenario'].includes(args[i - 1]));
	const contextWindow = Number(value('--context-window') ?? CONTEXT_WINDOW);
	if (!db || !Number.isInteger(contextWindow) || contextWindow < 0) {
		console.error('usage: classify.mjs DB [--context-window N] [--check-scenario NAME]');
		process.exit(2);
	}
	const report = await classifyDatabase(db, { contextWindow });
	let rc = 0;
	if (value('--check-scenario')) {
		const { SCENARIOS } = await import('./scenarios.mjs');
		const misses = checkScenario(SCENARIOS[value('--check-scenario')] ?? {}, report);
		for (const m of misses) console.error(`classify.mjs: ${value('--check-scenario')}: ${m}`);
		if (misses.length) rc = 1;
	}
	// Exit only once the pipe took everything (stdout to a pipe is asynchronous).
	process.stdout.write(`${JSON.stringify(report, null, 2)}\n`, () => process.exit(rc));
}
