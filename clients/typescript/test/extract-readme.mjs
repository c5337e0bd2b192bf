// Writes each ```ts block of the README as a program (example-N.ts) and the ```text block that
// follows it as the output it must print (example-N.expected.txt). Blocks marked
// "<!-- not run -->" on the line before are skipped.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
const [readme, outDir] = process.argv.slice(2);
const lines = readFileSync(readme, "utf8").split("\n");
mkdirSync(outDir, { recursive: true });
let n = 0;
for (let i = 0; i < lines.length; i++) {
  if (lines[i] !== "```ts") continue;
  const skip = i > 0 && lines[i - 1].includes("<!-- not run -->");
  const code = [];
  for (i++; lines[i] !== "```"; i++) code.push(lines[i]);
  if (skip) continue;
  let j = i + 1;
  while (j < lines.length && lines[j].trim() === "" ) j++;
  while (j < lines.length && !lines[j].startsWith("```") && !lines[j].startsWith("#")) j++;
  let expected = null;
  if (lines[j] === "```text") {
    const out = [];
    for (j++; lines[j] !== "```"; j++) out.push(lines[j]);
    expected = out.join("\n") + "\n";
  }
  if (expected === null) throw new Error(`README example ${n + 1} (line ${i}) has no \`\`\`text block of its output`);
  n++;
  writeFileSync(`${outDir}/example-${n}.ts`, code.join("\n") + "\n");
  writeFileSync(`${outDir}/example-${n}.expected.txt`, expected);
}
if (n === 0) throw new Error("the README has no ```ts example");
console.log(`README: ${n} examples`);
