/**
 * How the store's pool reads bigint (int8) columns — seqs, counts, revs: as numbers, since they stay far
 * below 2^53 (pg's default is a string). Its own file so the store keeps to its job.
 */
import pg from 'pg';

const INT8 = 20;

export const int8AsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
