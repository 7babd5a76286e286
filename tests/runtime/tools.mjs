// The fixtures' three tools. Each real execution is recorded in the side file ('tool_start' when
// run() is entered, 'tool_end' when it returns); the model puts the tool call id into
// args.callId, so executions can be counted per tool call id.
import { defineTool } from '@flue/runtime';
import * as v from 'valibot';
import { appendEvent } from './sidefile.mjs';

const input = v.object({ label: v.string(), ms: v.optional(v.number()), callId: v.optional(v.string()) });

function recordedTool(name, description) {
	return defineTool({
		name,
		description,
		input,
		run: async ({ input: args }) => {
			appendEvent({ event: 'tool_start', tool: name, toolCallId: args.callId, label: args.label });
			// The recorded work is instant: these tests check which calls run, not how long.
			appendEvent({ event: 'tool_end', tool: name, toolCallId: args.callId, label: args.label });
			return { ok: true, tool: name, label: args.label };
		},
	});
}

export const tools = [
	recordedTool('fetch_record', 'Fetch a record (records each execution).'),
	recordedTool('write_note', 'Write a note (records each execution).'),
	recordedTool('send_email', 'Send an email (records each execution).'),
];
