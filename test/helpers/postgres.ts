/**
 * The suites' PostgreSQL (contract 16) is the bench's (`bench/lib/postgres.ts`, rows 16–18 start the same
 * server): one helper, so tests and bench run the same Debian PostgreSQL the same way.
 */
export * from '../../bench/lib/postgres.js';
