/** The journal `source` of runs started as A2A tasks: only those runs are A2A tasks (no SDK import, so start-up may read it). */
export const A2A_SOURCE = 'a2a';
