import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request with exactly the headers given (`Host` and `Origin`
 * included, which `fetch` will not let a caller set), as a browser or a
 * hostile client would send it.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, method, path: pathAndQuery, headers },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }),
        );
      },
    );
    request.on('error', reject);
    if (body !== undefined) request.write(body);
    request.end();
  });
}

/** A multipart/form-data upload body with one file part, as an HTML form would post it. */
export function multipartUpload(
  filename: string,
  content: string,
): { headers: Record<string, string>; body: string } {
  const boundary = 'DatalystTestBoundary';
  return {
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    body:
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
      `Content-Type: text/csv\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  };
}
