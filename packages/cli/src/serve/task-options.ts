import type { ServeOptions } from '@tiffin/core';
import { type Command, Option } from 'commander';
import { parsePositiveInt } from '../options.js';
import type { TaskStoreFlags } from './task-store.js';

/** The flags {@link taskOptions} adds: where tasks live, and where and how their webhooks may go. */
export interface TaskOptionFlags extends TaskStoreFlags {
  webhookAllow: string[];
  webhookSecret?: string;
  webhookMaxInFlight?: number;
  webhookMaxPerHost?: number;
  webhookMaxQueued?: number;
}

/**
 * `--tasks`, `--tasks-dir` and the `--webhook-*` flags: one spelling for every command that serves task APIs
 * (`tiffin serve`, `tiffin diffusion start`), read with {@link taskStoreFlags} and {@link webhookOptions}.
 */
export const taskOptions = (command: Command): Command =>
  command
    .addOption(
      new Option(
        '--tasks <store>',
        "where task APIs' tasks live: disk (default, kept across restarts), memory, or redis://host:port/db (shared by replicas and --workers)",
      ).env('TIFFIN_TASKS_URL'),
    )
    .option('--tasks-dir <dir>', "the disk store's folder (default $TIFFIN_HOME/tasks/<service>)")
    .option(
      '--webhook-allow <host[:port][/path][?]>',
      "a host task webhooks may call, any path there, or with /path only that path and those under it, with no query unless it ends in ? (repeat for more; none by default: a submit's Tiffin-Webhook-Url is then refused)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      '--webhook-max-in-flight <n>',
      'task webhook deliveries in flight at once, every host together; more wait their turn (default 16)',
      parsePositiveInt,
    )
    .option(
      '--webhook-max-per-host <n>',
      'task webhook deliveries in flight at once to one host:port; more wait their turn (default 4)',
      parsePositiveInt,
    )
    .option(
      '--webhook-max-queued <n>',
      'task webhook deliveries waiting for their turn or their next retry; one more is dropped, logged (default 1024)',
      parsePositiveInt,
    )
    .addOption(
      new Option(
        '--webhook-secret <secret>',
        'the shared secret (whsec_<base64>) task webhooks are signed with, as Standard Webhooks sign',
      ).env('TIFFIN_WEBHOOK_SECRET'),
    );

/** `--tasks` and `--tasks-dir` as `useTaskStore` reads them. */
export const taskStoreFlags = (flags: TaskOptionFlags): TaskStoreFlags => ({
  tasks: flags.tasks,
  tasksDir: flags.tasksDir,
});

/** The `--webhook-*` flags as `serve()`'s `webhooks` option. */
export const webhookOptions = (flags: TaskOptionFlags): ServeOptions['webhooks'] => ({
  allow: flags.webhookAllow,
  secret: flags.webhookSecret,
  maxInFlight: flags.webhookMaxInFlight,
  maxPerHost: flags.webhookMaxPerHost,
  maxQueued: flags.webhookMaxQueued,
});
