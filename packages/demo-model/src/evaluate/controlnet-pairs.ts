import type { SceneSpec } from '../dataset/attributes.js';
import { splitScenes } from '../dataset/scenes.js';
import type { SceneReading } from './read-scene.js';

/**
 * A ControlNet case: the prompt asks for one scene, the edge map is drawn from another whose shape and position
 * both differ. A net that guides draws the map's shape, position and size in the prompt's colour and background.
 */
export interface ControlNetPair {
  prompt: SceneSpec;
  map: SceneSpec;
}

/**
 * One pair per held-out scene (never trained on): the prompt is the scene, the map the first held-out scene from
 * 37 places on whose shape and position both differ from it. Fixed order, the same on every machine.
 */
export function controlNetPairs(): ControlNetPair[] {
  const { heldOut } = splitScenes();
  return heldOut.map((prompt, i) => {
    for (let k = 37; ; k++) {
      const map = heldOut[(i + k) % heldOut.length];
      if (map.shape !== prompt.shape && map.position !== prompt.position) return { prompt, map };
    }
  });
}

/** What a ControlNet case is scored on: the map's shape, position and size, the prompt's colour and background. */
export interface PairScore {
  /** Shape and position both the map's. */
  followsMap: boolean;
  shape: boolean;
  position: boolean;
  size: boolean;
  colour: boolean;
  background: boolean;
}

export function scorePair(pair: ControlNetPair, reading: SceneReading): PairScore {
  const shape = reading.shape === pair.map.shape;
  const position = reading.position === pair.map.position;
  return {
    followsMap: shape && position,
    shape,
    position,
    size: reading.size === pair.map.size,
    colour: reading.colour === pair.prompt.colour,
    background: reading.background === pair.prompt.background,
  };
}
