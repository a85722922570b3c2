-- Rows written before folding existed are in the coarser rollups already: `folded` 1 by default.
-- The event writer inserts its rows with 0; src/services/analytics/fold.ts folds them.
ALTER TABLE `verification_rollups_minute` ADD `folded` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX `verification_rollups_minute_unfolded_idx` ON `verification_rollups_minute` (`workspace_id`,`time`) WHERE "verification_rollups_minute"."folded" = 0;--> statement-breakpoint
-- A folded minute row that is updated later (an event that arrives after its minute was folded)
-- passes the difference on to its hour, day and month rows, so they always hold every folded count.
CREATE TRIGGER `verification_rollups_minute_refold` AFTER UPDATE OF `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`
ON `verification_rollups_minute` WHEN old.`folded` = 1 AND new.`folded` = 1
BEGIN
  INSERT INTO `verification_rollups_hour` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`) VALUES (CAST(new.`time` / 3600000 * 3600000 AS INTEGER), new.`workspace_id`, new.`key_space_id`, new.`key_id`, new.`identity_id`, new.`external_id`, new.`outcome`, new.`tags`, new.`count` - old.`count`, new.`spent_credits` - old.`spent_credits`, new.`latency_sum_ms` - old.`latency_sum_ms`, new.`latency_max_ms`)
    ON CONFLICT (`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`) DO UPDATE SET `count` = `count` + excluded.`count`, `spent_credits` = `spent_credits` + excluded.`spent_credits`,
      `latency_sum_ms` = `latency_sum_ms` + excluded.`latency_sum_ms`, `latency_max_ms` = max(`latency_max_ms`, excluded.`latency_max_ms`);
  INSERT INTO `verification_rollups_day` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`) VALUES (CAST(new.`time` / 86400000 * 86400000 AS INTEGER), new.`workspace_id`, new.`key_space_id`, new.`key_id`, new.`identity_id`, new.`external_id`, new.`outcome`, new.`tags`, new.`count` - old.`count`, new.`spent_credits` - old.`spent_credits`, new.`latency_sum_ms` - old.`latency_sum_ms`, new.`latency_max_ms`)
    ON CONFLICT (`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`) DO UPDATE SET `count` = `count` + excluded.`count`, `spent_credits` = `spent_credits` + excluded.`spent_credits`,
      `latency_sum_ms` = `latency_sum_ms` + excluded.`latency_sum_ms`, `latency_max_ms` = max(`latency_max_ms`, excluded.`latency_max_ms`);
  INSERT INTO `verification_rollups_month` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`) VALUES (CAST(unixepoch(new.`time` / 1000, 'unixepoch', 'start of month') * 1000 AS INTEGER), new.`workspace_id`, new.`key_space_id`, new.`key_id`, new.`identity_id`, new.`external_id`, new.`outcome`, new.`tags`, new.`count` - old.`count`, new.`spent_credits` - old.`spent_credits`, new.`latency_sum_ms` - old.`latency_sum_ms`, new.`latency_max_ms`)
    ON CONFLICT (`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`) DO UPDATE SET `count` = `count` + excluded.`count`, `spent_credits` = `spent_credits` + excluded.`spent_credits`,
      `latency_sum_ms` = `latency_sum_ms` + excluded.`latency_sum_ms`, `latency_max_ms` = max(`latency_max_ms`, excluded.`latency_max_ms`);
END;--> statement-breakpoint
-- Each coarser rollup as the queries read it: its rows, and the minute rows not folded into it yet,
-- in its buckets. A (bucket, key, identity, outcome, tags) may have a row of each; sums are exact.
CREATE VIEW `verification_rollups_hour_all` AS
  SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_hour`
  UNION ALL
  SELECT CAST(`time` / 3600000 * 3600000 AS INTEGER), `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_minute` INDEXED BY `verification_rollups_minute_unfolded_idx` WHERE `folded` = 0;--> statement-breakpoint
CREATE VIEW `verification_rollups_day_all` AS
  SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_day`
  UNION ALL
  SELECT CAST(`time` / 86400000 * 86400000 AS INTEGER), `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_minute` INDEXED BY `verification_rollups_minute_unfolded_idx` WHERE `folded` = 0;--> statement-breakpoint
CREATE VIEW `verification_rollups_month_all` AS
  SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_month`
  UNION ALL
  SELECT CAST(unixepoch(`time` / 1000, 'unixepoch', 'start of month') * 1000 AS INTEGER), `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_minute` INDEXED BY `verification_rollups_minute_unfolded_idx` WHERE `folded` = 0;
