// A scripted, local model provider (no network), registered through the runtime's own
// registerApiProvider / registerProvider so sessions drive it through the normal streamSimple()
// path like a real provider.
//
// Every fixture input carries a marker `[[script:NAME#TAG]]`. For each call the provider finds
// the last marker in the context and counts the finished assistant turns after it: that count k
// selects step k of script NAME. These are the answers the fixtures' crash runs gave on their
// final attempt, so a resumed submission finishes the way its script ends. Tool call ids are
// `tc_<TAG>_<k>_<i>`, the ids of the crash run: a turn the runtime replays asks for the same ids
// again, which is how a second execution shows in the side file.
import { createAssistantMessageEventStream } from '@earendil-works/pi-ai';
import { registerApiProvider, registerProvider } from '@flue/runtime';
import { appendFileSync } from 'node:fs';
import { appendEvent } from './sidefile.mjs';

// With TURNSCOPE_RECORD_CONTEXT=FILE every call appends one JSON line to FILE: the script marker
// it answered, whether it was the compaction's summary request, and the context's messages after
// the model library's `transformMessages` (the step every built-in provider applies before it
// builds its payload; a provider registered like this one receives the context before it). The
// library's own copy is imported by file, as its package exports do not list it, with the
// normaliser of its Anthropic provider (`anthropic.js`: `[^a-zA-Z0-9_-]` to `_`, 64 characters).
// turnscope's `next-request` view is compared with these lines (tests/integration/next_request.rs).
const RECORD = process.env.TURNSCOPE_RECORD_CONTEXT;
const transformMessages = RECORD
	? (await import(new URL('./providers/transform-messages.js', import.meta.resolve('@earendil-works/pi-ai')))).transformMessages
	: undefined;
const anthropicToolCallId = (id) => id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);

function recordContext(call, model, context, marker, k) {
	if (!RECORD) return;
	const summary = (context.systemPrompt ?? '').startsWith(SUMMARIZER_PREFIX);
	const messages = transformMessages(context.messages ?? [], model, anthropicToolCallId);
	const line = { call, script: marker?.script ?? null, tag: marker?.tag ?? null, step: k, summary, received: (context.messages ?? []).length, messages };
	appendFileSync(RECORD, `${JSON.stringify(line)}\n`);
}

export const FAKE_MODEL = 'harness/scripted-1';
const FAKE_API = 'harness-scripted-api';
const CONTEXT_WINDOW = 200_000;

const tool = (name, label) => ({ name, args: { label } });
const FAST3 = [tool('fetch_record', 'a'), tool('write_note', 'b'), tool('send_email', 'c')];
const SLOW2 = [tool('fetch_record', 'a'), tool('write_note', 'b-slow'), tool('send_email', 'c')];

const SCRIPTS = {
	text: [{ text: 'Done: a plain text answer.' }],
	'three-tools': [{ tools: FAST3 }, { text: 'All three tools finished.' }],
	'three-tools-slow2': [{ tools: SLOW2 }, { text: 'All three tools finished (slow batch).' }],
	'tools-then-crash-at-provider': [{ tools: FAST3 }, { text: 'Summary after the tools.' }],
	'tools-then-midstream': [{ tools: FAST3 }, { text: 'A long summary after the tools, streamed slowly to the client.' }],
	'crash-at-provider': [{ text: 'Answer after restart.' }],
	midstream: [{ text: 'A streamed answer that the crash cuts in the middle.' }],
	'overloaded-then-ok': [{ text: 'Answer after retry.' }],
	'429-twice-then-ok': [{ text: 'Answer after two retries.' }],
	'overflow-then-ok': [{ text: 'Answer after compaction.' }],
	'terminal-error': [{ error: 'invalid_request_error: messages.0.content: unsupported content block type' }],
	'stream-abort': [{ text: 'A partial answer that a graceful shutdown aborts mid-stream.' }],
	'toolcall-abort': [{ tools: FAST3 }, { text: 'Finished after the tool batch.' }],
	'tool-then-text': [{ tools: [tool('write_note', 'single')] }, { text: 'Note written.' }],
};

const MARKER = /\[\[script:([A-Za-z0-9_-]+)#([A-Za-z0-9_-]+)\]\]/g;
const SUMMARIZER_PREFIX = 'You are a context summarization assistant';

function messageText(m) {
	if (typeof m?.content === 'string') return m.content;
	if (!Array.isArray(m?.content)) return '';
	return m.content.map((p) => (p.type === 'text' ? p.text : p.type === 'toolCall' ? JSON.stringify(p.arguments) : '')).join('\n');
}

function lastMarker(messages) {
	for (let i = messages.length - 1; i >= 0; i--) {
		if (messages[i].role === 'assistant') continue;
		const found = [...messageText(messages[i]).matchAll(MARKER)];
		if (found.length > 0) return { index: i, script: found.at(-1)[1], tag: found.at(-1)[2] };
	}
	return undefined;
}

function usage(input, output) {
	return { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

function answer(context) {
	const messages = context.messages ?? [];
	const marker = lastMarker(messages);
	if ((context.systemPrompt ?? '').startsWith(SUMMARIZER_PREFIX)) {
		const tail = marker ? `\n[[script:${marker.script}#${marker.tag}]]` : '';
		return { marker, k: 0, spec: { text: `## Goal\nContinue the scripted task.\n## Progress\nEarlier turns were compacted.${tail}` } };
	}
	if (!marker) return { k: 0, spec: { text: 'No script marker found; done.' } };
	const k = messages
		.slice(marker.index + 1)
		.filter((m) => m.role === 'assistant' && ['toolUse', 'stop', 'length'].includes(m.stopReason)).length;
	const script = SCRIPTS[marker.script];
	if (!script) throw new Error(`unknown script ${marker.script}`);
	return { marker, k, spec: script[k] ?? { text: `Script ${marker.script} finished (step ${k}).` } };
}

export function installFakeModel() {
	let calls = 0;
	const streamSimple = (model, context) => {
		const stream = createAssistantMessageEventStream();
		const call = ++calls;
		const { marker, k, spec } = answer(context);
		appendEvent({ event: 'model_call', call, script: marker?.script, tag: marker?.tag, step: k });
		recordContext(call, model, context, marker, k);
		const message = {
			role: 'assistant',
			content: [],
			api: model.api,
			provider: model.provider,
			model: model.id,
			responseId: `resp_${process.pid}_${call}`,
			usage: usage(50 + messages(context) * 20, 0),
			stopReason: 'stop',
			timestamp: Date.now(),
		};
		const snap = () => structuredClone(message);
		queueMicrotask(() => {
			stream.push({ type: 'start', partial: snap() });
			if (spec.text) {
				message.content.push({ type: 'text', text: spec.text });
				message.usage = usage(message.usage.input, 1);
				stream.push({ type: 'text_start', contentIndex: 0, partial: snap() });
				stream.push({ type: 'text_delta', contentIndex: 0, delta: spec.text, partial: snap() });
				stream.push({ type: 'text_end', contentIndex: 0, content: spec.text, partial: snap() });
			}
			if (spec.error) {
				const err = snap();
				err.stopReason = 'error';
				err.errorMessage = spec.error;
				stream.push({ type: 'error', reason: 'error', error: err });
				stream.end();
				return;
			}
			for (const [i, t] of (spec.tools ?? []).entries()) {
				const id = `tc_${marker?.tag ?? 'x'}_${k}_${i}`;
				const args = { ...t.args, callId: id };
				message.content.push({ type: 'toolCall', id, name: t.name, arguments: args });
				const contentIndex = message.content.length - 1;
				stream.push({ type: 'toolcall_start', contentIndex, partial: snap() });
				stream.push({ type: 'toolcall_delta', contentIndex, delta: JSON.stringify(args), partial: snap() });
				stream.push({ type: 'toolcall_end', contentIndex, toolCall: structuredClone(message.content[contentIndex]), partial: snap() });
			}
			message.stopReason = spec.tools?.length ? 'toolUse' : 'stop';
			stream.push({ type: 'done', reason: message.stopReason, message: snap() });
			stream.end();
		});
		return stream;
	};
	registerApiProvider({ api: FAKE_API, stream: streamSimple, streamSimple });
	registerProvider('harness', { api: FAKE_API, baseUrl: 'http://fake-provider.invalid', apiKey: 'not-a-real-key', contextWindow: CONTEXT_WINDOW, maxTokens: 4096 });
}

function messages(context) {
	return context.messages?.length ?? 0;
}
