// Shared by the node runners of the conformance test: the built package named on the command line, and the
// fixture lines on stdin as raw bytes (split on \n only, so every byte of a line reaches the checker).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

/** Imports the built package given as the first argument, or exits with a usage line naming `runner`. */
export async function loadPackage(runner) {
  const dist = process.argv[2];
  if (!dist) {
    console.error(`usage: node ${runner} <dist/index.js>`);
    process.exit(2);
  }
  return import(pathToFileURL(dist).href);
}

/** The lines of stdin, without their \n, as byte arrays. */
export function stdinLines() {
  const input = readFileSync(0);
  const lines = [];
  let start = 0;
  for (let i = 0; i < input.length; i++) {
    if (input[i] === 0x0a) {
      lines.push(input.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < input.length) lines.push(input.subarray(start));
  return lines;
}
