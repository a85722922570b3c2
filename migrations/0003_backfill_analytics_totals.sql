-- The totals of the verifications recorded before the totals tables existed, from their rollups.
INSERT INTO `verification_totals_minute` (`time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits`)
SELECT `time`, `workspace_id`, `key_space_id`, `outcome`, sum(`count`), sum(`spent_credits`) FROM `verification_rollups_minute`
GROUP BY `workspace_id`, `time`, `key_space_id`, `outcome`;
--> statement-breakpoint
INSERT INTO `verification_totals_hour` (`time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits`)
SELECT `time`, `workspace_id`, `key_space_id`, `outcome`, sum(`count`), sum(`spent_credits`) FROM `verification_rollups_hour`
GROUP BY `workspace_id`, `time`, `key_space_id`, `outcome`;
--> statement-breakpoint
INSERT INTO `verification_totals_day` (`time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits`)
SELECT `time`, `workspace_id`, `key_space_id`, `outcome`, sum(`count`), sum(`spent_credits`) FROM `verification_rollups_day`
GROUP BY `workspace_id`, `time`, `key_space_id`, `outcome`;
--> statement-breakpoint
INSERT INTO `verification_totals_month` (`time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits`)
SELECT `time`, `workspace_id`, `key_space_id`, `outcome`, sum(`count`), sum(`spent_credits`) FROM `verification_rollups_month`
GROUP BY `workspace_id`, `time`, `key_space_id`, `outcome`;
