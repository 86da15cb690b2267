/** Hours the old signing secret keeps signing beside the new one after a rotation, unless told otherwise. */
export const DEFAULT_OVERLAP_HOURS = 24;
