// Text helpers with no editor in them, so that they are tested on their own (test/text.test.ts).

/**
 * The part of `explain`'s text report on the rule file `name`: the report's head (the folder, the
 * settings files, the features), that file's entry, and the report's tail (placeholders, warnings,
 * totals); `undefined` when the report has no entry for it.
 */
export function ruleReport(report: string, name: string): string | undefined {
  const lines = report.split("\n");
  const isEntry = (line: string) => line.startsWith("├─ ") || line.startsWith("└─ ");
  const first = lines.findIndex(isEntry);
  if (first < 0) return undefined;
  let end = first;
  let start = -1;
  let stop = -1;
  for (let i = first; i < lines.length; i++) {
    const line = lines[i]!;
    if (isEntry(line)) {
      if (start >= 0 && stop < 0) stop = i;
      if (line.slice(3).split("  ")[0] === name) start = i;
    } else if (!line.startsWith("│") && !line.startsWith(" ")) {
      end = i;
      break;
    }
    end = i + 1;
  }
  if (start < 0) return undefined;
  if (stop < 0) stop = end;
  return [...lines.slice(0, first), ...lines.slice(start, stop), ...lines.slice(end)].join("\n");
}

/** 7825 → "7.8k", 512 → "512". */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  if (tokens < 100_000) return `${(tokens / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  return `${Math.round(tokens / 1000)}k`;
}

/** The last non-empty line of `text`, without the `pi-rules: ` that the CLI's messages start with. */
export function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return (lines[lines.length - 1] ?? "").replace(/^pi-rules: /, "");
}
