// `node --import ./register-hooks.mjs classify.mjs …`: the load hook of expose-hooks.mjs.
import { register } from 'node:module';
register('./expose-hooks.mjs', import.meta.url);
