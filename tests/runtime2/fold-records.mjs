// The runtime's reducer on arbitrary record logs: for each line of FILE (JSON Lines, each an
// array of records, one stream's records in order), flue's own reduceConversationRecords from an
// empty state, and one JSON line out: the folded state in brief, or the invariant it refused.
//
//   node --import ./register-hooks.mjs fold-records.mjs FILE
//
// Out, per line: {"ok":[{conversationId, activeLeafId, entries, activePath:[ids],
// inProgress:[messageIds], uncommitted:[recordIds]}, …]} (conversations in creation order), or
// {"invariant":{recordId, recordType, reason}} (ConversationRecordInvariantError's meta), or
// {"other":"Name: message"} for anything else the reducer threw. The differential test of
// turnscope's fold (tests/integration/runtime2.rs) feeds it mutated fixture logs.
import { readFileSync } from 'node:fs';
import { loadFlueInternals } from './classify.mjs';

const flue = await loadFlueInternals();
const lines = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.trim());
const out = [];
for (const line of lines) {
	const records = JSON.parse(line);
	try {
		const state = flue.reduceConversationRecords(flue.createReducedInstanceState(), records);
		out.push({
			ok: [...state.conversations.values()].map((c) => ({
				conversationId: c.conversationId,
				activeLeafId: c.activeLeafId,
				entries: c.entries.size,
				activePath: flue.getActiveConversationPath(c).map((e) => e.id),
				inProgress: [...c.inProgressMessages.keys()],
				uncommitted: [...c.toolOutcomes.values()],
			})),
		});
	} catch (error) {
		if (error?.name === 'ConversationRecordInvariantError') {
			const { recordId, recordType, reason } = error.meta;
			out.push({ invariant: { recordId, recordType, reason } });
		} else out.push({ other: `${error?.name}: ${error?.message}` });
	}
}
process.stdout.write(`${out.map((o) => JSON.stringify(o)).join('\n')}\n`, () => process.exit(0));
