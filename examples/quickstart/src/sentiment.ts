/** A multinomial naive-Bayes sentiment model with Laplace smoothing, trained on a tiny embedded corpus. */
const CORPUS: ReadonlyArray<[string, 'positive' | 'negative']> = [
  ['I love this product, it works great', 'positive'],
  ['Absolutely wonderful experience, highly recommend', 'positive'],
  ['Fantastic quality and fast delivery', 'positive'],
  ['The food was delicious and the staff friendly', 'positive'],
  ['Great value, very happy with it', 'positive'],
  ['Excellent service, I am impressed', 'positive'],
  ['Best purchase this year, love it', 'positive'],
  ['Nice design and easy to use', 'positive'],
  ['Terrible, it broke after one day', 'negative'],
  ['I hate it, complete waste of money', 'negative'],
  ['Awful customer service and slow delivery', 'negative'],
  ['The food was cold and bland', 'negative'],
  ['Very disappointed, poor quality', 'negative'],
  ['Worst experience ever, do not buy', 'negative'],
  ['It does not work, useless and cheap', 'negative'],
  ['Bad design and hard to use', 'negative'],
];

export type Sentiment = 'positive' | 'negative';

function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}']+/gu) ?? [];
}

export class NaiveBayesSentiment {
  private readonly counts = new Map<Sentiment, Map<string, number>>();
  private readonly totals = new Map<Sentiment, number>();
  private readonly priors = new Map<Sentiment, number>();
  private readonly vocabulary = new Set<string>();

  constructor(corpus: ReadonlyArray<[string, Sentiment]> = CORPUS) {
    for (const [text, label] of corpus) {
      this.priors.set(label, (this.priors.get(label) ?? 0) + 1 / corpus.length);
      const words = this.counts.get(label) ?? new Map<string, number>();
      this.counts.set(label, words);
      for (const token of tokenize(text)) {
        this.vocabulary.add(token);
        words.set(token, (words.get(token) ?? 0) + 1);
        this.totals.set(label, (this.totals.get(label) ?? 0) + 1);
      }
    }
  }

  /** Posterior probability of each label. */
  scores(text: string): Record<Sentiment, number> {
    const v = this.vocabulary.size;
    const logs = new Map<Sentiment, number>();
    for (const [label, prior] of this.priors) {
      let lp = Math.log(prior);
      const words = this.counts.get(label)!;
      const total = this.totals.get(label)!;
      for (const token of tokenize(text)) {
        if (!this.vocabulary.has(token)) continue;
        lp += Math.log(((words.get(token) ?? 0) + 1) / (total + v));
      }
      logs.set(label, lp);
    }
    const max = Math.max(...logs.values());
    let sum = 0;
    for (const lp of logs.values()) sum += Math.exp(lp - max);
    const out = {} as Record<Sentiment, number>;
    for (const [label, lp] of logs) out[label] = Math.exp(lp - max) / sum;
    return out;
  }

  predict(text: string): Sentiment {
    const s = this.scores(text);
    return s.positive >= s.negative ? 'positive' : 'negative';
  }
}
