import { createContext } from 'react';

/**
 * True while rendering for a pipe or a file rather than a terminal: components then print plain
 * lines (no frames, no padding to a width), and a secret stands on a line of its own.
 */
export const PlainOutput = createContext(false);
