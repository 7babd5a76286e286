// Writing a driver's one JSON document to stdout before it exits.
import { writeSync } from 'node:fs';

// The whole of `text` to `fd`: one writeSync to a pipe writes at most what the pipe takes (64 KiB)
// and, the process exiting right after, the rest was lost; a full pipe throws EAGAIN, tried again.
export function writeAll(fd, text) {
	const buf = Buffer.from(text);
	let off = 0;
	while (off < buf.length) {
		try {
			off += writeSync(fd, buf, off);
		} catch (e) {
			if (e.code !== 'EAGAIN') throw e;
		}
	}
}
