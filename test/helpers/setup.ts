/** Runs in every test file: no daemon a test started outlives its file, even when the test failed. */
import { afterAll } from 'vitest';
import { killAllDaemons } from './daemon.js';

afterAll(killAllDaemons);
