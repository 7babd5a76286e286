// The runtime's classifier on arbitrary record logs: for each line of FILE (JSON Lines, each
// {records, inputEntryId, harness, session, contextWindow}), flue's own reduceConversationRecords
// from an empty state, then its classifyConversationSubmission(conversation, inputEntryId,
// { contextWindow }) on the conversation of scope (harness, session) -- classifySubmissionState
// (undefined) where there is none -- and its findTrailingPartialToolBatch over the message entries
// after the input (what its repair passes it). One JSON line out per line in:
//
//   {"classification": {...}, "trailingPartialToolBatch": [ids] | null}   (as classify.mjs)
//   {"fold": {recordId, recordType, reason}}   the reducer refused the log
//   {"throws": "Name: message"}               the classifier threw (a completion without usage)
//
//   node --import ./register-hooks.mjs classify-records.mjs FILE
//
// The differential test of turnscope's classifier (tests/integration/runtime2.rs) feeds it every
// prefix of the fixtures' logs and mutants of them.
import { readFileSync } from 'node:fs';
import { describeClassification, loadFlueInternals } from './classify.mjs';

const flue = await loadFlueInternals();
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
	try {
		const result = conversation
			? flue.classifyConversationSubmission(conversation, inputEntryId, { contextWindow })
			: flue.classifySubmissionState(undefined, { contextWindow });
		const after = conversation ? flue.getActiveConversationPathSince(conversation, inputEntryId) : undefined;
		const batch = after ? flue.findTrailingPartialToolBatch(after.filter((e) => e.type === 'message')) : undefined;
		out.push({ classification: describeClassification(result), trailingPartialToolBatch: batch ? batch.toolCalls.map((c) => c.id) : null });
	} catch (error) {
		out.push({ throws: `${error?.name}: ${error?.message}` });
	}
}
process.stdout.write(`${out.map((o) => JSON.stringify(o)).join('\n')}\n`, () => process.exit(0));
