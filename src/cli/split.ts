// Shell-like splitting of `--stdio "CMD ARGS"`: whitespace separates words,
// single quotes are literal, double quotes allow \" \\ \$ \` escapes, and a
// backslash outside quotes escapes the next character. No expansion of any kind:
// the result is handed to spawn() as an argv, never to a shell.

export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end === -1) throw new Error('unterminated single quote');
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error('unterminated double quote');
        const d = line[i]!;
        if (d === '"') break;
        if (d === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) {
          word += line[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      inWord = true;
      i++;
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('trailing backslash');
      word += line[i + 1];
      inWord = true;
      i += 2;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The inverse, for display: words that need it are single-quoted so the line splits back the same. */
export function joinCommandLine(words: string[]): string {
  return words.map((word) => (/^[A-Za-z0-9_\-.,/:=@%+]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)).join(' ');
}
