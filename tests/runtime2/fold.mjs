// The runtime's own fold of every conversation stream of a flue 2.1.0 database, as JSON.
//
//   node --import ./register-hooks.mjs fold.mjs DB
//
// Each stream (flue_conversation_streams, by path) is loaded by flue's own reader,
// loadReducedConversationState over its built-in sqlite() adapter (batches, spilled chunks, fold
// checkpoints: its code), and the reducer's state printed: per conversation (in creation order)
// its id, kind, harness, session, active leaf, the active path (getActiveConversationPath) with
// each entry's shape, the in-progress ("ghost") messages with their blocks, and the recorded but
// uncommitted tool outcomes (toolOutcomes, in insertion order). A stream the reducer refuses
// prints its error. Works on a copy; depends on no clock. turnscope's fold
// (turnscope-core's flue2 module) is checked against this output.
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { sqlite } from '@flue/runtime/node';
import { loadFlueInternals, scratchCopy } from './classify.mjs';

function entryShape(entry) {
	const out = { id: entry.id, parentId: entry.parentId ?? null };
	if (entry.submissionId !== undefined) out.submissionId = entry.submissionId;
	if (entry.type !== 'message') {
		out.type = entry.type;
		if (entry.type === 'compaction') out.firstKeptEntryId = entry.firstKeptEntryId;
		return out;
	}
	const m = entry.message;
	out.role = m.role;
	if (m.role === 'user') out.text = m.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
	if (m.role === 'signal') out.signalType = m.type;
	if (m.role === 'assistant') {
		out.stopReason = m.stopReason;
		if (m.errorMessage !== undefined) out.errorMessage = m.errorMessage;
		out.text = m.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
		out.toolCalls = m.content.filter((c) => c.type === 'toolCall').map((c) => ({ id: c.id, name: c.name }));
	}
	if (m.role === 'toolResult') {
		out.toolCallId = m.toolCallId;
		out.toolName = m.toolName;
		out.isError = m.isError;
		if (entry.toolTerminate) out.terminate = true;
	}
	return out;
}

export async function foldDatabase(dbPath) {
	const flue = await loadFlueInternals();
	const scratch = scratchCopy(dbPath);
	const adapter = sqlite(scratch.path);
	try {
		const raw = new DatabaseSync(scratch.path, { readOnly: true });
		const paths = raw.prepare('SELECT path FROM flue_conversation_streams ORDER BY path').all().map((r) => r.path);
		raw.close();
		const { conversationStreamStore } = await adapter.connect();
		const streams = [];
		for (const path of paths) {
			let state;
			try {
				state = await flue.loadReducedConversationState({ store: conversationStreamStore, path });
			} catch (error) {
				streams.push({ path, error: `${error?.name ?? 'Error'}: ${error?.message ?? error}` });
				continue;
			}
			streams.push({
				path,
				conversations: [...state.conversations.values()].map((c) => ({
					conversationId: c.conversationId,
					kind: c.kind,
					harness: c.harness,
					session: c.session,
					activeLeafId: c.activeLeafId,
					entries: c.entries.size,
					activePath: flue.getActiveConversationPath(c).map(entryShape),
					inProgressMessages: [...c.inProgressMessages.values()].map((m) => ({
						messageId: m.messageId,
						parentId: m.parentId ?? null,
						submissionId: m.submissionId ?? null,
						blocks: [...m.blocks.values()].map((b) =>
							b.type === 'tool_call'
								? { type: b.type, blockIndex: b.blockIndex, toolCallId: b.toolCallId, name: b.name }
								: { type: b.type, blockIndex: b.blockIndex, text: b.deltas.join(''), completed: b.completed },
						),
					})),
					uncommittedToolOutcomes: [...c.toolOutcomes.values()].map((recordId) => {
						const rec = state.recordsById.get(recordId);
						return { recordId, assistantMessageId: rec.assistantMessageId, toolCallId: rec.toolCallId, isError: rec.isError };
					}),
				})),
			});
		}
		return { runtime: '@flue/runtime 2.1.0', streams };
	} finally {
		try {
			adapter.close();
		} catch {}
		scratch.done();
	}
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const db = process.argv[2];
	if (!db) {
		console.error('usage: fold.mjs DB');
		process.exit(2);
	}
	const report = await foldDatabase(db);
	process.stdout.write(`${JSON.stringify(report, null, 2)}\n`, () => process.exit(0));
}
