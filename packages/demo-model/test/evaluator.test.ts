import { describe, expect, it } from 'vitest';
import { caption, SHAPES } from '../src/dataset/attributes.js';
import { renderScene } from '../src/dataset/render.js';
import { allScenes, HELD_OUT_COUNT, jitters, splitScenes } from '../src/dataset/scenes.js';
import { paraphrase } from '../src/evaluate/phrasings.js';
import { readScene } from '../src/evaluate/read-scene.js';
import { AccuracyTally } from '../src/evaluate/score.js';

describe('dataset', () => {
  it('splits every combination into disjoint training and held-out prompts, the same way each run', () => {
    const { train, heldOut } = splitScenes();
    expect(heldOut.length).toBe(HELD_OUT_COUNT);
    expect(HELD_OUT_COUNT).toBeGreaterThanOrEqual(100);
    expect(train.length + heldOut.length).toBe(allScenes().length);
    const trainCaptions = new Set(train.map(caption));
    expect(heldOut.some((s) => trainCaptions.has(caption(s)))).toBe(false);
    expect(splitScenes().heldOut.map(caption)).toEqual(heldOut.map(caption));
  });

  it("asks for held-out scenes in people's words too, none of them a training caption's", () => {
    const { train, heldOut } = splitScenes();
    const trainCaptions = new Set(train.map(caption));
    const people = heldOut.map((s, i) => paraphrase(s, i));
    expect(people.some((p) => trainCaptions.has(p))).toBe(false);
    // Only a medium shape at the top or bottom edge on white or black has no other word for any of its parts.
    const same = heldOut.filter((s, i) => people[i] === caption(s));
    for (const s of same) {
      expect(s.size).toBe('medium');
      expect(['top', 'bottom']).toContain(s.position);
      expect(s.background).not.toBe('grey');
    }
    expect(same.length).toBeLessThan(heldOut.length / 20);
    const words = new Set(people.flatMap((p) => p.split(' ')));
    for (const w of ['big', 'huge', 'tiny', 'little', 'center', 'middle', 'gray', 'side', 'upper', 'lower'])
      expect(words.has(w), w).toBe(true);
    expect(
      paraphrase(
        { shape: 'cross', colour: 'blue', size: 'large', position: 'bottom right', background: 'grey' },
        0,
      ),
    ).toBe('a big blue cross at the lower right on a gray background');
  });

  it('captions in plain English', () => {
    expect(
      caption({ shape: 'circle', colour: 'red', size: 'small', position: 'top left', background: 'white' }),
    ).toBe('a small red circle at the top left on a white background');
    expect(
      caption({ shape: 'cross', colour: 'blue', size: 'large', position: 'centre', background: 'black' }),
    ).toBe('a large blue cross in the centre on a black background');
  });

  it('renders deterministically', () => {
    const s = splitScenes().heldOut[0];
    expect(Buffer.from(renderScene(s).data).equals(Buffer.from(renderScene(s).data))).toBe(true);
  });
});

describe('evaluator on the dataset’s own pictures', () => {
  it('reads every held-out prompt’s ground-truth picture back exactly', () => {
    const tally = new AccuracyTally();
    for (const s of splitScenes().heldOut) tally.add(s, readScene(renderScene(s)));
    expect(tally.accuracy()).toEqual({ colour: 1, background: 1, position: 1, shape: 1, size: 1 });
  });

  it('reads jittered training pictures (as the model saw them) back', () => {
    const tally = new AccuracyTally();
    const next = jitters(4, 'evaluator-test');
    for (const s of splitScenes().train.filter((_, i) => i % 7 === 0))
      tally.add(s, readScene(renderScene(s, next())));
    const acc = tally.accuracy();
    expect(acc.colour).toBe(1);
    expect(acc.background).toBe(1);
    expect(acc.position).toBe(1);
    expect(acc.shape).toBeGreaterThanOrEqual(0.99);
  });

  it('finds no shape in a plain background, and tells every shape class apart', () => {
    const plain = renderScene({
      shape: 'circle',
      colour: 'red',
      size: 'small',
      position: 'centre',
      background: 'grey',
    });
    plain.data.fill(128);
    expect(readScene(plain)).toMatchObject({ background: 'grey', shape: null, colour: null });
    for (const shape of SHAPES) {
      const spec = { shape, colour: 'green', size: 'medium', position: 'right', background: 'grey' } as const;
      expect(readScene(renderScene(spec)).shape).toBe(shape);
    }
  });

  it('rejects a picture that is not square RGB', () => {
    expect(() => readScene({ width: 4, height: 2, data: new Uint8Array(24) })).toThrow(/square RGB/);
  });
});
