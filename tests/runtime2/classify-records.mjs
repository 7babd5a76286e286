// The runtime's classifier on arbitrary record logs: for each line of FILE (JSON Lines, each
// {records, inputEntryId, harness, session, contextWindow}), flue's own reduceConversationRecords
// from an empty state, then its classifyConversationSubmission(conversation, inputEntryId,
// { contextWindow }) on the conversation of scope (harness, session) -- classifySubmissionState
// (undefined) where there is none -- and its findTrailingPartialToolBatch over the message entries
// after the input (what its repair passes it); the same of 2.0.0's and 2.0.5's classifiers (the
// three variants; installed beside 2.1.0 under the aliases flue-runtime-2.0.0 and -2.0.5) over
// that conversation. One JSON line out per line in:
//
//   {"2.0.0": A, "2.0.5": A, "2.1.0": A}      each release's answer A, one of
//       {"classification": {...}, "trailingPartialToolBatch": [ids] | null}   (as classify.mjs)
//       {"throws": "Name: message"}           the classifier threw (a completion without usage)
//   {"fold": {recordId, recordType, reason}}  2.1.0's reducer refused the log
//
//   node --import ./register-hooks.mjs classify-records.mjs FILE
//
// The differential test of turnscope's classifier (tests/integration/runtime2.rs) feeds it every
// prefix of the fixtures' logs and mutants of them.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeClassification, loadFlueInternals } from './classify.mjs';

const flue = await loadFlueInternals();

/** The classifier of an older release installed under `alias` (package.json), through the hook. */
async function olderClassifier(alias) {
	const distDir = dirname(dirname(fileURLToPath(import.meta.resolve(`${alias}/node`))));
	const chunk = readdirSync(distDir).find((f) => f.endsWith('.mjs') && readFileSync(join(distDir, f), 'utf8').includes('function classifySubmissionState('));
	if (!chunk) throw new Error(`${alias}: no dist chunk defines classifySubmissionState`);
	const m = await import(pathToFileURL(join(distDir, chunk)).href);
	if (typeof m.__turnscope_classifyConversationSubmission !== 'function') throw new Error(`${alias}: classifier not exposed`);
	return {
		classifySubmissionState: m.__turnscope_classifySubmissionState,
		classifyConversationSubmission: m.__turnscope_classifyConversationSubmission,
		findTrailingPartialToolBatch: m.__turnscope_findTrailingPartialToolBatch,
	};
}
// The three variants: 2.0.0 (as 2.0.1 and 2.0.3), 2.0.5, and 2.1.0 (as 2.0.8).
const classifiers = {
	'2.0.0': await olderClassifier('flue-runtime-2.0.0'),
	'2.0.5': await olderClassifier('flue-runtime-2.0.5'),
	'2.1.0': flue,
};

/** One release's answer on `conversation` (2.1.0's reducer's: the entries have the same shape). */
function answer(c, conversation, inputEntryId, contextWindow) {
	try {
		const result = conversation
			? c.classifyConversationSubmission(conversation, inputEntryId, { contextWindow })
			: c.classifySubmissionState(undefined, { contextWindow });
		const after = conversation ? flue.getActiveConversationPathSince(conversation, inputEntryId) : undefined;
		const batch = after ? c.findTrailingPartialToolBatch(after.filter((e) => e.type === 'message')) : undefined;
		return { classification: describeClassification(result), trailingPartialToolBatch: batch ? batch.toolCalls.map((t) => t.id) : null };
	} catch (error) {
		return { throws: `${error?.name}: ${error?.message}` };
	}
}

const lines = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.trim());
const out = [];
for (const line of lines) {
	const { records, inputEntryId, harness, session, contextWindow } = JSON.parse(line);
	let state;
	try {
		state = flue.reduceConversationRecords(flue.createReducedInstanceState(), records);
	} catch (error) {
		if (error?.name === 'ConversationRecordInvariantError') {
			const { recordId, recordType, reason } = error.meta;
			out.push({ fold: { recordId, recordType, reason } });
		} else out.push({ fold: { other: `${error?.name}: ${error?.message}` } });
		continue;
	}
	const conversationId = state.conversationScopes.get(flue.conversationScopeKey(harness, session));
	const conversation = conversationId ? state.conversations.get(conversationId) : undefined;
	out.push(Object.fromEntries(Object.entries(classifiers).map(([release, c]) => [release, answer(c, conversation, inputEntryId, contextWindow)])));
}
process.stdout.write(`${out.map((o) => JSON.stringify(o)).join('\n')}\n`, () => process.exit(0));
