import { Box, Text } from 'ink';
import { Table } from './Table.js';

export interface DnsRecordRow {
  record: string;
  type: string;
  name: string;
  expected: string;
  live: string;
  status: string;
  verdict: string;
}

/** Long values (a DKIM key) are cut in the middle; `show` and `--json` print them whole. */
const clip = (value: string, width = 48) =>
  value.length <= width ? value : `${value.slice(0, width - 13)}…${value.slice(-12)}`;

const MARKS: Record<string, string> = {
  verified: '✔',
  failed: '✘',
  temporary_failure: '?',
  pending: '…',
  not_started: '…',
};

/** `postlane domains check`: every record, what DNS answers now, the verdict; then the hints. */
export function DnsRecordsTable({
  domain,
  status,
  rows,
  hints,
  width,
}: {
  domain: string;
  status: string;
  rows: DnsRecordRow[];
  hints: string[];
  width?: number;
}) {
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>{domain}</Text> <Text color={status === 'verified' ? 'green' : 'yellow'}>({status})</Text>
      </Text>
      <Table
        columns={['', 'RECORD', 'TYPE', 'NAME', 'EXPECTED', 'DNS ANSWERS NOW', 'VERDICT']}
        rows={rows.map((r) => [
          MARKS[r.status] ?? ' ',
          r.record,
          r.type,
          r.name,
          clip(r.expected),
          clip(r.live),
          r.verdict,
        ])}
        width={width}
      />
      {hints.length > 0 ? (
        <Box flexDirection="column" marginTop={1}>
          <Text bold>Hints</Text>
          {hints.map((hint, index) => (
            <Text key={index}> - {hint}</Text>
          ))}
        </Box>
      ) : null}
    </Box>
  );
}
