/**
 * The logrotate rule for the background mode's log file (install.sh writes it to /etc/logrotate.d/postlane
 * when it runs as root; under systemd the journal rotates). The process keeps its log open for append
 * (O_APPEND), so `copytruncate` rotates it without a signal: the next line lands at the start of the
 * emptied file. The lines written between the copy and the truncation (a few milliseconds) are lost
 * from the rotated file; nothing else is.
 */
export function logrotateConfig(logFile: string, owner: { user: string; group: string } | null): string {
  return [
    `${logFile} {`,
    '  daily',
    '  rotate 14',
    '  maxsize 100M',
    '  missingok',
    '  notifempty',
    '  compress',
    '  delaycompress',
    '  copytruncate',
    ...(owner ? [`  su ${owner.user} ${owner.group}`] : []),
    '}',
    '',
  ].join('\n');
}
