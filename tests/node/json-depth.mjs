// The nesting depth of a JSON text (arrays and objects count one level each), counted on the TEXT, as
// serde_json's parser counts it: a parsed value would have lost the first of two repeated keys, and with it any
// nesting under that key ({"a":[[...200 levels...]],"a":1} is too deep for serde_json, and JSON.parse keeps only
// "a":1). Iterative; strings (and escaped quotes in them) are skipped.
export function textDepth(text) {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return max;
}
